"""The split activation prompts are redacted like every other source (T-UAS-060)."""

from __future__ import annotations

import pytest
from uas_unify_helpers import of_type, run, write_tree

GH_TOKEN = "ghp_" + "A" * 36
AWS_KEY = "AKIAABCDEFGHIJKLMNOP"


@pytest.mark.uas("T-UAS-060")
def test_prompt_files_lose_registered_masks_and_credentials(tmp_path) -> None:
    root = write_tree(tmp_path / "art", {
        "agent-stdio.log": "::add-mask::MyMaskedValue_42\n",
        "aw-prompts/user.txt": f"prompt with {GH_TOKEN} and MyMaskedValue_42",
        "aw-prompts/system.txt": f"system prompt {AWS_KEY} MyMaskedValue_42",
    })
    records, _report, data = run(root, tmp_path)
    assert b"MyMaskedValue_42" not in data and GH_TOKEN.encode() not in data and AWS_KEY.encode() not in data
    (user,) = of_type(records, "prompt.user")
    (system,) = of_type(records, "prompt.system")
    assert user["data"]["content"] == "prompt with *** and ***"
    assert system["data"]["content"] == "system prompt *** ***"


@pytest.mark.uas("T-UAS-060")
def test_a_prompt_without_needles_is_kept_exactly(tmp_path) -> None:
    text = "  exact\r\nprompt text\n\n"
    root = write_tree(tmp_path / "art", {"aw-prompts/user.txt": text})
    records, _report, _data = run(root, tmp_path, masks=["unrelated-mask"])
    assert of_type(records, "prompt.user")[0]["data"]["content"] == text
