"""What the inference engine raises: a bad answer, a stage that got none, a missing key, a cancel."""


class MalformedModelOutput(ValueError):
    """The model's reply is not what the stage asked for; the message says what is wrong."""


class StageFailed(Exception):
    """A stage got no usable answer within its attempts; ``stage`` names it, ``str()`` says why."""

    def __init__(self, stage: str, reason: str):
        super().__init__(f"{stage}: {reason}")
        self.stage = stage
        self.reason = reason


class MissingKey(Exception):
    """The environment variable named as a server's key holder is not set (message says which)."""


class RunCancelled(Exception):
    """The run was cancelled while this stage waited to call its model."""
