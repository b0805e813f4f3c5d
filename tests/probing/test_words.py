from biaslab.probing.words import words


def test_tokens_are_lower_case_words_with_hyphenated_compounds_whole():
    assert words("He is Self-Confident, ambitious; a LEADER's leader.") == [
        "he",
        "is",
        "self-confident",
        "ambitious",
        "a",
        "leader",
        "s",
        "leader",
    ]
    assert words("**Strong** and _kind_ -- well-known!") == ["strong", "and", "kind", "well-known"]
    assert words("She's caring/kind.\nAnger") == ["she", "s", "caring", "kind", "anger"]
    assert words("Émotionnel café") == ["émotionnel", "café"]
    assert words("") == [] and words(None) == []
