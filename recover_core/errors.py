"""One exception type for every problem a user can fix: the CLI prints it, the UI shows it."""


class RecoverError(ValueError):
    """Bad input or an unavailable model, with a message meant for a person."""
