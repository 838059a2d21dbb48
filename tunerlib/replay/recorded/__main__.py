"""``python -m tunerlib.replay.recorded``: tune over a recorded benchmark (see :mod:`.interface`)."""
import sys

from tunerlib.replay.recorded.interface import RecordedInterface

if __name__ == "__main__":
    sys.argv[0] = "python -m tunerlib.replay.recorded"     # the usage line names the command, not __main__.py
    sys.exit(RecordedInterface.main())
