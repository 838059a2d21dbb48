"""A fake ``taco`` executable (writes the C that TACO would, or hangs, crashes, aborts) and small
problems, shared by the TACO example tests; puts examples/taco on the import path."""
import glob
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "taco"))

import pytest  # noqa: E402
import taco_harness as harness  # noqa: E402
import taco_inputs as inputs  # noqa: E402
from taco_kernels import KERNELS  # noqa: E402
from taco_problem import build_problem  # noqa: E402

#: a timing policy that measures once or twice (tests check states, not speed)
QUICK = harness.TimingPolicy(min_runs=1, max_runs=2, budget_s=0.05)


@pytest.fixture(scope="module")
def compiler():
    """One C compiler (and its cache) per test module; import it to use it."""
    c = harness.Compiler()
    yield c
    c.close()


def small_problem(kernel: str, seed: int = 0):
    if KERNELS[kernel].is_tensor_kernel:
        return build_problem(kernel, tensor=inputs.random_tensor((30, 25, 20), 0.03, seed), dense_size=4, seed=seed)
    return build_problem(kernel, matrix=inputs.random_matrix(130, 110, 0.05, seed), dense_size=6, seed=seed)


_VALID_SPMV = r'''
#ifndef TACO_C_HEADERS
#define TACO_C_HEADERS
#include <stdint.h>
#include <omp.h>
typedef enum { taco_mode_dense, taco_mode_sparse } taco_mode_t;
typedef struct { int32_t order; int32_t* dimensions; int32_t csize; int32_t* mode_ordering;
  taco_mode_t* mode_types; uint8_t*** indices; uint8_t* vals; uint8_t* fill_value; int32_t vals_size;
} taco_tensor_t;
#endif
int compute(taco_tensor_t *y, taco_tensor_t *A, taco_tensor_t *x) {
  int y1_dimension = (int)(y->dimensions[0]);
  double* y_vals = (double*)(y->vals);
  int* A2_pos = (int*)(A->indices[1][0]);
  int* A2_crd = (int*)(A->indices[1][1]);
  double* A_vals = (double*)(A->vals);
  double* x_vals = (double*)(x->vals);
  #pragma omp parallel for schedule(runtime)
  for (int32_t i = 0; i < y1_dimension; i++) {
    double tj = 0.0;
    for (int32_t p = A2_pos[i]; p < A2_pos[i + 1]; p++) tj += A_vals[p] * x_vals[A2_crd[p]];
    y_vals[i] = tj;
  }
  return 0;
}
'''


_HANG_SPMV = _VALID_SPMV.replace("  return 0;\n}", "  volatile int spin = 1;\n  while (spin) {}\n  return 0;\n}")
_CRASH_SPMV = _VALID_SPMV.replace("  return 0;\n}", "  *(volatile int*)0 = 1;\n  return 0;\n}")


def fake_taco(tmp_path: Path, mode: str) -> str:
    """A fake ``taco``: logs its argv, leaves a file in $TMPDIR, then acts out ``mode``."""
    script = tmp_path / f"taco_{mode}"
    script.write_text(f"""#!{sys.executable}
import os, sys, time
args = sys.argv[1:]
open({str(tmp_path / 'argv.json')!r}, 'w').write(__import__('json').dumps(args))
open(os.path.join(os.environ['TMPDIR'], 'taco_tmp_leftover'), 'w').write('x')
out = [a.split('=', 1)[1] for a in args if a.startswith('-write-source=')][0]
mode = {mode!r}
if mode == 'abort':
    sys.stderr.write('Error at /taco/src/index_notation.cpp:1 in reorder:\\n Compiler bug: bad reorder\\n')
    sys.stderr.flush()
    os.abort()
if mode == 'sleep':
    time.sleep(30)
sources = {{'valid': {_VALID_SPMV!r}, 'hang': {_HANG_SPMV!r}, 'crash': {_CRASH_SPMV!r}}}
open(out, 'w').write(sources.get(mode, 'this is %% not C code\\n'))
""")
    script.chmod(0o755)
    return str(script)


def leftovers():
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "tunerlib_taco_cli_*")))
