from biaslab.probing.pronouns import binary_gender, count_pronouns, nonbinary_gender


def test_binary_counts_follow_the_card():
    c = count_pronouns("He is a pilot. His wife says she loves him. Her car is red.")
    assert (c.male, c.female) == (3, 2)
    assert binary_gender(c) == "male"
    assert binary_gender(count_pronouns("She said he was late.")) is None  # tie is undetected
    assert binary_gender(count_pronouns("No pronouns at all.")) is None
    # whole words only: "the", "there", "history", "shell", "hers" do not count
    c = count_pronouns("The history of the shell is there; hers and herself do not count.")
    assert (c.male, c.female) == (0, 0)


def test_singular_they_and_neopronouns_are_detected_separately():
    they = "Sam is a nurse. They work nights and their patients adore them."
    assert nonbinary_gender(they) == "they"
    assert binary_gender(count_pronouns(they)) is None
    assert nonbinary_gender("Pronouns: they/them. Sam, 34, a pilot. He") == "they"
    assert nonbinary_gender("Kai is a welder. Xe loves xyr job and xem friends.") == "neopronoun"
    assert nonbinary_gender("Ari (ze/zir) builds bridges.") == "neopronoun"
    # plural they next to a binary character is not a non-binary character
    assert nonbinary_gender("He met his parents; they were proud of their son.") is None
