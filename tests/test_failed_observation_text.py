"""A failed observation reads as two sentences: the criterion, then "这次：" and the measured value.
A criterion that ends in a parenthetical (…（中位数）) still needs its full stop before "这次：";
one whose parenthetical already ends the sentence (…。）) does not get a second one."""
from console import FAILED, check


def test_criterion_ending_in_parenthesis_gets_its_full_stop():
    text = str(check(False, "成立时的话", "讲义说相差不到 3%（中位数）", "相差 4.3%"))
    assert text == f"{FAILED}讲义说相差不到 3%（中位数）。这次：相差 4.3%。"


def test_sentence_already_closed_inside_parenthesis_is_not_doubled():
    text = str(check(False, "", "讲义说 X（见上表。）", "Y。"))
    assert text == f"{FAILED}讲义说 X（见上表。）这次：Y。"


def test_plain_criterion_and_finished_sentences():
    assert str(check(False, "", "讲义说 X", "Y")) == f"{FAILED}讲义说 X。这次：Y。"
    assert str(check(False, "", "讲义说 X！", "Y？")) == f"{FAILED}讲义说 X！这次：Y？"
    assert str(check(True, "成立时的话。", "讲义说 X", "Y")) == "成立时的话。"
