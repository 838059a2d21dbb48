"""A tuner script's --help: the options class's docstring as the description (else the interface's,
never the signature @dataclass writes into __doc__), each option's help followed by its default."""
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _help(script, tmp_path):
    proc = subprocess.run([sys.executable, str(script), "--help"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_the_tutorial_tuner_help_shows_its_docstring_and_defaults(tmp_path):
    out = _help(REPO / "examples" / "tutorial" / "matmul_tuner.py", tmp_path)
    flat = " ".join(out.split())
    assert "Tune gcc's flags and the tile sizes of a tiled matrix multiplication" in flat
    assert "MatmulOptions(" not in out and "<factory>" not in out
    assert "the matrices are SIZE x SIZE (default: 300)" in flat
    assert "the C compiler (default: gcc)" in flat
    assert "--bandit-window BANDIT_WINDOW sliding window (uses) of that AUC bandit (default: 500)" in flat
    assert "(default: None)" not in out and "(default: False)" not in out


def test_an_options_subclass_without_a_docstring_gets_the_interface_docstring(tmp_path):
    script = tmp_path / "tuner.py"
    script.write_text(textwrap.dedent('''
        from dataclasses import dataclass
        from tunerlib import MeasurementInterface, TuningOptions

        @dataclass
        class MyOptions(TuningOptions):
            size: int = 100

        class MyTuner(MeasurementInterface):
            """Tune my kernel's block size."""
            Options = MyOptions

        if __name__ == "__main__":
            raise SystemExit(MyTuner.main())
        '''))
    out = _help(script, tmp_path)
    assert "Tune my kernel's block size." in out
    assert "MyOptions(" not in out and "technique: List[str]" not in out
    assert "--size SIZE           (default: 100)" in out
