"""The five TACO kernels of the BaCO benchmark: expressions, tensor formats and loop names.

Index names follow the BaCO TACO client (``apps/taco_dse/taco_helper.h`` of ``lrubens/taco``
branch ``grpc``), not the summary table of ``benchmark-taco_spaces.md`` (which renames SpMM's indices):

=========  ======================================  ==========================================
kernel     TACO expression                         loops of the schedule (identity order)
=========  ======================================  ==========================================
spmv       ``y(i) = A(i,j) * x(j)``                i0, i10, i11, jpos1, jpos0
spmm       ``A(i,k) = B(i,j) * C(j,k)``            i0, i1, jpos0, k, jpos1
sddmm      ``A(i,j) = B(i,j) * C(i,k) * D(k,j)``   i0, i1, jpos0, k, jpos1
ttv        ``A(i,j) = B(i,j,k) * c(k)``            i0, chunk, fpos2, kpos1, kpos2
mttkrp     ``A(i,j) = B(i,k,l) * C(k,j) * D(l,j)`` i0, i1, k, l, j
=========  ======================================  ==========================================

Formats (TACO letters, one per level: ``d`` dense, ``s`` compressed): matrices are CSR (``ds``),
3-tensors CSF with a dense root level (``dss``), dense operands ``d``/``dd``.  Outputs are dense,
except in the built-in generator's SDDMM and TTV, whose outputs keep the sparse input's pattern
(SDDMM: one value per nonzero of ``B``; TTV: one value per ``(i,j)`` fiber of ``B``, as the BaCO
client's ``copyNonZeroStructure`` output).  The TACO CLI backend uses dense outputs throughout.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Tuple

#: kernel names, in the order of the issue
KERNEL_NAMES: Tuple[str, ...] = ("spmv", "spmm", "sddmm", "ttv", "mttkrp")


@dataclass(frozen=True)
class TensorInfo:
    """One tensor of a kernel: name, builtin format, TACO-CLI format, and whether it is the output."""

    name: str
    builtin_format: str
    taco_format: str
    output: bool = False


@dataclass(frozen=True)
class KernelInfo:
    """Static facts about one kernel (see the module docstring)."""

    name: str
    expression: str
    tensors: Tuple[TensorInfo, ...]
    loops: Tuple[str, ...]
    parallel: str
    sparse_input: str
    description: str

    @property
    def output(self) -> TensorInfo:
        """The output tensor (always first, as in TACO's generated ``compute`` signature)."""
        return self.tensors[0]

    def formats(self, backend: str) -> List[str]:
        """Per-tensor formats in argument order for ``backend`` (``builtin`` or ``taco``)."""
        return [t.builtin_format if backend == "builtin" else t.taco_format for t in self.tensors]

    @property
    def is_tensor_kernel(self) -> bool:
        """True for the 3-tensor kernels (ttv, mttkrp), False for the matrix kernels."""
        return self.name in ("ttv", "mttkrp")


def _t(name: str, builtin: str, taco: str = "", output: bool = False) -> TensorInfo:
    return TensorInfo(name, builtin, taco or builtin, output)


KERNELS: Dict[str, KernelInfo] = {
    "spmv": KernelInfo(
        "spmv", "y(i) = A(i,j) * x(j)",
        (_t("y", "d", output=True), _t("A", "ds"), _t("x", "d")),
        ("i0", "i10", "i11", "jpos1", "jpos0"), "i0", "A",
        "sparse matrix times dense vector (CSR)"),
    "spmm": KernelInfo(
        "spmm", "A(i,k) = B(i,j) * C(j,k)",
        (_t("A", "dd", output=True), _t("B", "ds"), _t("C", "dd")),
        ("i0", "i1", "jpos0", "k", "jpos1"), "i0", "B",
        "sparse matrix times dense matrix (CSR x row-major)"),
    "sddmm": KernelInfo(
        "sddmm", "A(i,j) = B(i,j) * C(i,k) * D(k,j)",
        (_t("A", "ds", "dd", output=True), _t("B", "ds"), _t("C", "dd"), _t("D", "dd")),
        ("i0", "i1", "jpos0", "k", "jpos1"), "i0", "B",
        "sampled dense-dense matrix product (CSR sample, output on the sample's pattern)"),
    "ttv": KernelInfo(
        "ttv", "A(i,j) = B(i,j,k) * c(k)",
        (_t("A", "ds", "dd", output=True), _t("B", "dss"), _t("c", "d")),
        ("i0", "chunk", "fpos2", "kpos1", "kpos2"), "chunk", "B",
        "sparse 3-tensor times vector (CSF, output on the tensor's (i,j) fibers)"),
    "mttkrp": KernelInfo(
        "mttkrp", "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
        (_t("A", "dd", output=True), _t("B", "dss"), _t("C", "dd"), _t("D", "dd")),
        ("i0", "i1", "k", "l", "j"), "i0", "B",
        "matricized tensor times Khatri-Rao product (CSF 3-tensor)"),
}


def kernel(name: str) -> KernelInfo:
    """The :class:`KernelInfo` called ``name``; KeyError naming the choices otherwise."""
    try:
        return KERNELS[name]
    except KeyError:
        raise KeyError(f"unknown kernel {name!r}; choose from {', '.join(KERNEL_NAMES)}") from None
