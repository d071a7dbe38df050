"""How the `icepurge` command line reaches icepurge: the HTTP API (the default: no Temporal
address and no codec key needed), or Temporal directly (`--direct`, for admins)."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_API_PORT = 8000


def _local_api_url() -> str:
    """The API `make run` serves, on the port it was told to use."""
    return f"http://127.0.0.1:{os.environ.get('ICEPURGE_API_PORT', DEFAULT_API_PORT)}"


class CliSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ICEPURGE_", env_file=".env", extra="ignore")

    api_url: str = Field(default_factory=_local_api_url, description="The icepurge HTTP API.")
    api_token: SecretStr | None = Field(None, repr=False, description="A bearer token for the API.")
    api_token_file: Path | None = Field(None, description="A file holding the token (first line).")
    cli_direct: bool = Field(False, description="Talk to Temporal directly instead of the API.")

    def token(self) -> str | None:
        if self.api_token is not None:
            return self.api_token.get_secret_value()
        if self.api_token_file is not None:
            lines = self.api_token_file.read_text().splitlines()
            return lines[0].strip() if lines else None
        return None
