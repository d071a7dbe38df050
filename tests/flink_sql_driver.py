"""A Flink SQL session in a process of its own, run by an engines-tier PyFlink (`make engines`:
Flink 2.1 with Iceberg's Flink runtime, which the project's own environment has none of): the
session's configuration as the first JSON line on stdin (not in argv, where any process listing
would show its store keys), then one JSON line a statement, and one JSON line an answer on stdout
({"rows": [...]} or {"error": "..."}). Statements run in batch mode, one at a time, each to its
end (an INSERT is one commit). It imports only PyFlink."""

from __future__ import annotations

import json
import os
import sys
from typing import TextIO

from pyflink.table import EnvironmentSettings, TableEnvironment


def _answer(environment: TableEnvironment, statement: str) -> dict[str, object]:
    result = environment.execute_sql(statement)
    if statement.lstrip().upper().startswith("INSERT"):
        # A write's answer is its job's end: its commit is in the table.
        result.wait()
        return {"rows": []}
    names = result.get_table_schema().get_field_names()
    with result.collect() as rows:
        return {"rows": [dict(zip(names, (str(value) for value in row), strict=True)) for row in rows]}


def _serve(environment: TableEnvironment, answers: TextIO) -> None:
    for line in sys.stdin:
        statement = json.loads(line)["sql"]
        try:
            answer = _answer(environment, statement)
        except Exception as error:  # the caller asserts on the message
            answer = {"error": f"{type(error).__name__}: {error}"}
        answers.write(json.dumps(answer, default=str) + "\n")
        answers.flush()


if __name__ == "__main__":
    # Answers keep stdout to themselves: Flink's JVM, which inherits it, prints there ("Job has
    # been submitted …"), so everything else goes to stderr (the session's log).
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    environment = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    configuration = environment.get_config()
    for key, value in json.loads(sys.stdin.readline()).items():
        configuration.set(key, value)
    answers.write(json.dumps({"ready": "flink"}) + "\n")
    answers.flush()
    _serve(environment, answers)
