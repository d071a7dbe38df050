"""The base of the models icepurge exchanges: an unknown field is an error, not dropped, so a
misspelt option, or a payload from a newer release, fails loudly instead of being half read."""

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FrozenModel(StrictModel):
    """A value: hashable, and never changed once made."""

    model_config = ConfigDict(frozen=True)
