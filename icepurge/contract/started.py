"""What a start answers: the purge it names, and whether that purge had already closed."""

from pydantic import BaseModel, Field

CLOSED_DESCRIPTION = (
    "Set when the start found this purge already closed: the start changed nothing, and this says "
    "how to run it again."
)


class StartOutcome(BaseModel):
    purge_id: str
    closed: str | None = Field(None, description=CLOSED_DESCRIPTION)
