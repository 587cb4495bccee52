"""The single write path every door calls: policy, entry, checkpoint, append.

Doors (the SDK, collector, recorder, session importers) and uses that write
(redaction, repair, custody) never build entries themselves.
"""

from bitexact.recording.checkpoints import CheckpointPolicy
from bitexact.recording.writer import Recorder, RunWriter, new_run_id

__all__ = ["CheckpointPolicy", "Recorder", "RunWriter", "new_run_id"]
