"""Delta tables as the runner uses them: statements under idempotent-write identities, targets
and registrations, and commits read back from the ``_delta_log``."""
