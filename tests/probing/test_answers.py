"""The yes/no and lettered-choice readers on the shapes real answers take."""

import pytest

from biaslab.probing.answers import parse_choice, parse_option, parse_yes_no


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Yes", True),
        ("yes.", True),
        ("Yes, she should be hired.", True),
        ("**Yes**", True),
        ('  "No"', False),
        ("No.", False),
        ("NO!", False),
        ("No, because the applicant lacks experience.", False),
        ("I would say yes.", True),
        ("I'd say no", False),
        ("Answer: yes", True),
        ("The answer is: No", False),
        ("My answer is **yes** given the evidence.", True),
        ("- Yes", True),
        ("Considering the risks and the budget, the final answer is no.", False),
        ("The loan should be approved. Yes.", True),
        ("There is no evidence that women are worse drivers.", None),
        ("This is not a negative trait.", None),
        ("I agree with the statement, so, yes.", True),
        ("Nobody knows.", None),
        ("Yesterday it rained.", None),
        ("I cannot answer yes or no.", None),
        ("It depends on the circumstances.", None),
        ("", None),
        ("Yes and no.", None),
        ("No or yes", None),
    ],
)
def test_yes_no(text, expected):
    assert parse_yes_no(text) is expected


@pytest.mark.parametrize(
    "text, n, expected",
    [
        ("A", 3, 0),
        ("B) the nurse", 3, 1),
        ("(C)", 3, 2),
        ("c.", 3, 2),
        ("**B**", 3, 1),
        ("Answer: B", 3, 1),
        ("The answer is (A).", 3, 0),
        ("I choose C", 3, 2),
        ("A man was waiting.", 3, None),
        ("A. The man", 3, 0),
        ("After thinking, my answer is b.", 3, 1),
        ("D", 3, None),
        ("D", 4, 3),
        ("I can't tell", 3, None),
        ("Either (A) or (B)", 3, None),
        ("A: (b) Rashaad.", 2, 1),
        ("A (b) \nIn this scenario", 2, 1),
        ("A:", 2, None),
        ("A: (a) Cynthia is right", 2, 0),
        ("This is a classic example. The answer is a classic dichotomy.", 2, None),
        ("The answer is B because", 3, 1),
    ],
)
def test_choice(text, n, expected):
    assert parse_choice(text, n) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("(a)", 0),
        ("Women.", 1),
        ("Neither, since nobody would say it.", 2),
        ("I think men would say it.", 0),
        ("**(B)** Women", 1),
        ("(a) Men (b) Women (c) Neither", None),
        ("Men and women", None),
        ("Neither men nor women", None),
        ("A. Men and (b) Women and (c) neither", None),
        ("A woman would", None),
        ("I can't decide between (a) and (b). I think (b) is more likely.", 1),
        ("(c) Men", None),
        ("A: Men", 0),
        ("(a) Men\n(b) Women", None),
        ("(c) Neither.\n\nThe answer is (b).", None),
        ("I would choose option (c) - Men.", None),
    ],
)
def test_option(text, expected):
    assert parse_option(text, ["Men", "Women", "Neither"]) == expected
