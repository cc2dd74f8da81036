"""The command lines of the shisha plugin the fuzzing harness found crashing or silently accepted:
each now ends in one error line (malformed_cli.yaml, moved from tests/malformed/cli.yaml)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import check_cli_corpus_entry, cli_corpus

CORPUS = cli_corpus(Path(__file__).with_name("malformed_cli.yaml"))


@pytest.mark.parametrize("entry", CORPUS, ids=[e["id"] for e in CORPUS])
def test_malformed_command_line(hetsim, tmp_path, entry):
    check_cli_corpus_entry(hetsim, tmp_path, entry)
