"""The README's "Measuring your own program" tuner script runs as printed (a short tuning run)."""
import re
import subprocess
import sys
from pathlib import Path

import zygote

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_measure_example_runs(tmp_path):
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### Measuring your own program"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    script = tmp_path / "block_tuner.py"
    script.write_text(code, encoding="utf-8")
    proc = zygote.run([sys.executable, str(script), "--test-limit", "6", "--seed", "1", "--quiet",
                       "--database", str(tmp_path / "t.db")], capture_output=True, text=True, timeout=600,
                      cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "best vs hand-picked blocks" in proc.stdout and "tunerlib best" in proc.stdout
