"""``python -m tunerlib.tools.recorded``: tune over a recorded benchmark (see :mod:`.interface`)."""
import sys

from tunerlib.tools.recorded.interface import RecordedInterface

if __name__ == "__main__":
    sys.exit(RecordedInterface.main())
