"""LocalAgreement's word comparison (`models/agreement.py`)."""

from __future__ import annotations

from models.agreement import agreed_prefix, leading_words, mid_sentence


def test_local_agreement_helpers():
    assert agreed_prefix("What is the notice", "what is the notice period?") == 4
    assert agreed_prefix("what is a", "what is the") == 2
    assert leading_words("Well, what is the notice period?", 3) == "Well, what is"
    assert leading_words("anything", 0) == ""
    # a committed prefix never carries the stop a pass put at its buffer's end
    assert mid_sentence("he might have been made still?") == "he might have been made still"
    assert (
        mid_sentence("to be rather cold-hearted and rather selfish...")
        == "to be rather cold-hearted and rather selfish"
    )
