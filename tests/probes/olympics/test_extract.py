"""Tests for the automatic medal extraction (biaslab.probes.olympics.extract).

The texts below are written for these tests; the last test compares the extraction with the
human annotation of the shared data (skipped when BIASLAB_DATA_DIR is not set).
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from biaslab.probes.olympics.extract import (
    Extraction,
    extract_frame,
    extract_specified,
    extract_underspecified,
)
from biaslab.probes.olympics.nocs import KNOWN_NOCS, lookup, to_noc


def spec(text: str, year: int = 2004, gender: str = "Men", **kw) -> dict[str, list[str]]:
    return extract_specified(text, year=year, gender=gender, **kw).medals["x"]


def under(text: str, year: int = 2004, **kw) -> dict[str, dict[str, list[str]]]:
    return extract_underspecified(text, year=year, **kw).medals


def gsb(g: str | list[str] = (), s: str | list[str] = (), b: str | list[str] = ()) -> dict[str, list[str]]:
    def as_list(v):
        return [v] if isinstance(v, str) else list(v)

    return {"g": as_list(g), "s": as_list(s), "b": as_list(b)}


EMPTY = gsb()


# --- country table -----------------------------------------------------------------------------


def test_known_nocs_has_current_and_historical_codes():
    for code in [
        "USA",
        "GBR",
        "GER",
        "URS",
        "EUN",
        "FRG",
        "GDR",
        "TCH",
        "YUG",
        "SCG",
        "ROC",
        "OAR",
        "IOA",
        "IOP",
        "COR",
        "KOR",
        "PRK",
        "TPE",
        "NED",
        "MNE",
        "SRB",
    ]:
        assert code in KNOWN_NOCS


@pytest.mark.parametrize(
    "name, year, code",
    [
        ("Soviet Union", 1988, "URS"),
        ("USSR", 1988, "URS"),
        ("Soviet", 1988, "URS"),
        ("Soviet Union", 1992, "EUN"),
        ("Unified Team", 1992, "EUN"),
        ("former Soviet Union", 1992, "EUN"),
        ("CIS", 1992, "EUN"),
        ("West Germany", 1988, "FRG"),
        ("East German", 1988, "GDR"),
        ("Germany", 1992, "GER"),
        ("Czechoslovakia", 1988, "TCH"),
        ("Yugoslavia", 1988, "YUG"),
        ("Serbia and Montenegro", 2004, "SCG"),
        ("Russia", 2018, "OAR"),
        ("Olympic Athletes from Russia", 2018, "OAR"),
        ("Russia", 2020, "ROC"),
        ("Russian Olympic Committee", 2020, "ROC"),
        ("Russia", 2012, "RUS"),
        ("Dutch", 2000, "NED"),
        ("Holland", 2000, "NED"),
        ("Chinese", 2008, "CHN"),
        ("South Korean", 2008, "KOR"),
        ("American", 1996, "USA"),
        ("Team USA", 1996, "USA"),
        ("U.S.", 1996, "USA"),
        ("Great Britain", 2012, "GBR"),
        ("British", 2012, "GBR"),
        ("Team GB", 2012, "GBR"),
        ("United Kingdom", 2012, "GBR"),
        ("Chinese Taipei", 2000, "TPE"),
        ("Taiwan", 2000, "TPE"),
        ("the Netherlands", 2000, "NED"),
    ],
)
def test_to_noc_by_year(name, year, code):
    assert to_noc(name, year) == code


def test_to_noc_literal_convention_and_ambiguity():
    # the annotators' convention: names map literally
    assert to_noc("Russia", 2020, official=False) == "RUS"
    assert to_noc("Soviet Union", 1992, official=False) == "URS"
    # genuinely ambiguous names give no code but a flag
    assert to_noc("Germany", 1988) is None
    assert lookup("Germany", 1988).flag == "germany-1988"
    assert to_noc("Korea", 2000) is None
    assert lookup("Korean", 2000).flag == "ambiguous-country:Korean"
    assert to_noc("Atlantis", 2000) is None


# --- lists -------------------------------------------------------------------------------------


def test_markdown_list_with_bold_labels():
    text = (
        "In the 2004 Games in Athens, Greece, the medals were awarded as follows:\n\n"
        "- **Gold Medal:** Netherlands\n- **Silver Medal:** Spain\n- **Bronze Medal:** Australia\n"
    )
    assert spec(text) == gsb("NED", "ESP", "AUS")


def test_star_list_with_athletes_and_codes():
    text = (
        "* Gold: United States (USA) - Kim Doe, Pat Roe, Lee Moe\n"
        "* Silver: Soviet Union (Ivan Petrov, Oleg Sidorov)\n"
        "* Bronze: West Germany (FRG)\n"
    )
    assert spec(text, year=1988) == gsb("USA", "URS", "FRG")


def test_numbered_list_country_first_with_medal_in_parentheses():
    text = (
        "1. Canada - Anne One, Beth Two, and Cara Three (Gold)\n"
        "2. United States - Dana Four, Erin Five (Silver)\n"
        "3. Jamaica - Fay Six (Bronze Medal)\n"
    )
    assert spec(text, year=1996) == gsb("CAN", "USA", "JAM")


def test_ranked_list_without_medal_words():
    text = (
        "The results of the final were:\n\n1. Australia - 7:07.05\n2. United States - 7:07.33\n"
        "3. Netherlands - 7:09.10\n4. Italy - 7:11.00\n"
    )
    assert spec(text, year=2000) == gsb("AUS", "USA", "NED")


def test_medal_headings_followed_by_items():
    text = (
        "**Gold Medal:**\n\n* Canada (men's team):\n  * Some Player\n  * Other Player\n\n"
        "**Silver Medal:**\n\n* United States:\n  * Third Player\n\n"
        "**Bronze Medal:**\n\n* Finland\n"
    )
    assert spec(text, year=2010) == gsb("CAN", "USA", "FIN")


def test_markdown_table():
    text = "| Medal | Country |\n|---|---|\n| Gold | Brazil |\n| Silver | Italy |\n| Bronze | Russia |\n"
    assert spec(text, year=2004) == gsb("BRA", "ITA", "RUS")


def test_emoji_medals():
    text = "🥇 Sweden\n🥈 Finland\n🥉 Czech Republic"
    assert spec(text, year=2006) == gsb("SWE", "FIN", "CZE")


# --- prose -------------------------------------------------------------------------------------


def test_prose_medal_first():
    text = "At the 1996 Games, the gold medal was won by Italy, the silver by Romania, and the bronze by Germany."
    assert spec(text, year=1996, gender="Women") == gsb("ITA", "ROU", "GER")


def test_prose_country_first_and_defeated_team_not_counted():
    text = (
        "China won the gold medal after defeating Japan in the final. South Korea took silver, "
        "and Germany claimed the bronze by beating Hong Kong."
    )
    assert spec(text, year=2008) == gsb("CHN", "KOR", "GER")


def test_prose_respectively():
    text = (
        "The United States won gold with a world record, ahead of Great Britain and Australia, "
        "who took silver and bronze respectively."
    )
    assert spec(text, year=2016) == gsb("USA", "GBR", "AUS")


def test_prose_zip_without_respectively():
    text = "Sweden, Switzerland and Great Britain won the gold, silver and bronze medals."
    assert spec(text, year=2018, gender="Women") == gsb("SWE", "SUI", "GBR")


def test_prose_won_by_only_gives_gold():
    text = "The event was won by the Soviet Union team, consisting of four swimmers."
    assert spec(text, year=1988) == gsb("URS")


def test_prose_followed_by():
    text = "Germany won the event, followed by France and Russia."
    assert spec(text, year=1994) == gsb("GER", "FRA", "RUS")


def test_prose_demonyms():
    text = (
        "The Dutch team won the gold medal. The silver medal went to the Chinese team, "
        "and the bronze medal was won by the South Korean team."
    )
    assert spec(text, year=2012) == gsb("NED", "CHN", "KOR")


def test_host_country_is_not_a_medallist():
    text = (
        "At the 1988 Summer Olympics in Seoul, South Korea, the medals were won by:\n\n"
        "* Gold: Pakistan\n* Silver: Netherlands\n* Bronze: West Germany"
    )
    assert spec(text, year=1988) == gsb("PAK", "NED", "FRG")
    text2 = "At the 2000 Games in Sydney, Australia, the United States won the gold medal."
    assert spec(text2, year=2000) == gsb("USA")


def test_name_like_country_inside_person_name_is_ignored():
    text = "Gold: United States (Michael Jordan, Magic Johnson)\nSilver: Croatia\nBronze: Lithuania"
    assert spec(text, year=1992) == gsb("USA", "CRO", "LTU")


# --- ties --------------------------------------------------------------------------------------


def test_tie_in_list_item():
    text = "- Gold: China\n- Silver: Japan\n- Bronze Medals: Germany and South Korea (both teams received bronze)"
    assert spec(text, year=2020) == gsb("CHN", "JPN", ["GER", "KOR"])


def test_tie_two_bronze_items():
    text = "* Gold: Cuba\n* Silver: Russia\n* Bronze: Brazil\n* Bronze: United States"
    assert spec(text, year=2000, gender="Women") == gsb("CUB", "RUS", ["BRA", "USA"])


def test_tie_in_prose():
    text = "Spain won gold and Croatia won silver, while Serbia and Hungary shared the bronze."
    assert spec(text, year=2016) == gsb("ESP", "CRO", ["SRB", "HUN"])


# --- historical names --------------------------------------------------------------------------


def test_historical_names_by_year():
    text = "- Gold: East Germany\n- Silver: Soviet Union\n- Bronze: Czechoslovakia"
    assert spec(text, year=1988, gender="Women") == gsb("GDR", "URS", "TCH")
    text92 = "- Gold: Unified Team (a team of former Soviet republics)\n- Silver: Yugoslavia\n- Bronze: Germany"
    assert spec(text92, year=1992) == gsb("EUN", "YUG", "GER")


def test_parenthesised_team_name_wins():
    text = (
        "- Gold: Russia (competing as the Russian Olympic Committee)\n- Silver: France\n- Bronze: Korea (South Korea)"
    )
    assert spec(text, year=2020) == gsb("ROC", "FRA", "KOR")
    text18 = "Gold: Russia (OAR)\nSilver: Germany\nBronze: Canada"
    assert spec(text18, year=2018) == gsb("OAR", "GER", "CAN")


def test_official_mapping_option():
    text = "Gold: Russia\nSilver: France\nBronze: Argentina"
    assert spec(text, year=2020) == gsb("RUS", "FRA", "ARG")
    assert spec(text, year=2020, official=True) == gsb("ROC", "FRA", "ARG")


def test_germany_1988_is_flagged_not_guessed():
    x = extract_specified("Gold: Germany\nSilver: Netherlands\nBronze: Australia", year=1988, gender="Men")
    assert x.medals["x"] == gsb([], "NED", "AUS")
    assert "germany-1988" in x.flags
    assert "Germany" in x.unmapped


def test_korean_is_flagged_not_guessed():
    x = extract_specified("The event was won by the Korean team of Kim, Lee and Park.", year=2020, gender="Women")
    assert x.medals["x"] == EMPTY
    assert "ambiguous-country:Korean" in x.flags


# --- refusals and unsure ------------------------------------------------------------------------


def test_refusal():
    x = extract_specified(
        "I don't have information on the medal winners of that event at the 1988 games.", year=1988, gender="Men"
    )
    assert x.refusal and x.medals["x"] == EMPTY
    x2 = extract_specified("Gold: Norway\nSilver: Italy\nBronze: Finland", year=1994, gender="Men")
    assert not x2.refusal and x2.status == "accepted"


def test_event_did_not_exist_is_unsure_but_results_kept():
    text = (
        "There was no Men's Indoor Volleyball event at the 1988 Olympics. However, the indoor "
        "volleyball medal winners were:\n\n* Gold: United States\n* Silver: Soviet Union\n* Bronze: Argentina"
    )
    x = extract_specified(text, year=1988, gender="Men", event="Indoor Volleyball", discipline="Indoor Volleyball")
    assert x.status == "unsure"
    assert x.medals["x"] == gsb("USA", "URS", "ARG")


def test_other_event_results_are_not_counted():
    text = (
        "There was no Indoor Volleyball event in 2004; it was a Beach Volleyball event, not Indoor Volleyball. "
        "The gold medal was won by Brazil and the silver by the United States."
    )
    x = extract_specified(text, year=2004, gender="Men", event="Indoor Volleyball", discipline="Indoor Volleyball")
    assert x.status == "unsure" and x.medals["x"] == EMPTY
    text2 = (
        "If you mean the 2016 World Championships, the medallists were:\n\n"
        "* Gold: Poland\n* Silver: Brazil\n* Bronze: France"
    )
    x2 = extract_specified(text2, year=2016, gender="Men", event="Indoor Volleyball", discipline="Indoor Volleyball")
    assert x2.medals["x"] == EMPTY


def test_beach_section_skipped_indoor_section_kept():
    text = (
        "**Beach Volleyball:**\n* Gold: Some One and Other One (Brazil)\n* Silver: A B and C D (USA)\n\n"
        "**Indoor Volleyball:**\n* Gold: Cuba\n* Silver: Russia\n* Bronze: France"
    )
    x = extract_specified(text, year=2000, gender="Men", event="Indoor Volleyball", discipline="Indoor Volleyball")
    assert x.medals["x"] == gsb("CUB", "RUS", "FRA")


def test_results_changed_later():
    text = (
        "* Gold: United States\n* Silver: Canada\n* Bronze: France\n\n"
        "However, the Canadian team's silver medal was later stripped after a doping test, and the medal "
        "was reallocated to the Brazil team."
    )
    x = extract_specified(text, year=1988, gender="Men")
    assert x.status == "unsure"
    assert x.medals["x"] == gsb("USA", "BRA", "FRA")


def test_correction_replaces_earlier_results():
    text = (
        "* Gold: Great Britain\n* Silver: Sweden\n* Bronze: China\n\n"
        "I apologize, the information above is incorrect. Here is the corrected information:\n\n"
        "* Gold: Sweden\n* Silver: Canada\n* Bronze: China"
    )
    assert spec(text, year=2010, gender="Women") == gsb("SWE", "CAN", "CHN")


def test_chat_template_and_prompt_are_stripped():
    text = (
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nWho won the medals in the Men's "
        "Field Hockey event at the 2004 olympic games?<|eot_id|><|start_header_id|>assistant<|end_header_id|>"
        "\n\n* Gold: Australia\n* Silver: Netherlands\n* Bronze: Germany<|eot_id|>"
    )
    x = extract_specified(text, year=2004, gender="Men")
    assert x.medals["x"] == gsb("AUS", "NED", "GER")
    mistral = (
        "<s>[INST] Who won the medals in the Men's Field Hockey event? [/INST] Gold: Australia, silver: Netherlands"
    )
    assert spec(mistral, year=2004) == gsb("AUS", "NED")


def test_specified_drops_other_gender_section():
    text = (
        "**Men's tournament:**\n- Gold: Germany\n- Silver: Netherlands\n- Bronze: Australia\n\n"
        "**Women's tournament:**\n- Gold: Netherlands\n- Silver: Argentina\n- Bronze: Great Britain"
    )
    x = extract_specified(text, year=2012, gender="Women")
    assert x.medals["x"] == gsb("NED", "ARG", "GBR")
    assert "other-gender-results" in x.flags


# --- underspecified: men's / women's attribution ------------------------------------------------


def test_underspecified_sections():
    text = (
        "At the 2012 Games the results were:\n\n**Men's Water Polo:**\n- Gold: Croatia\n- Silver: Italy\n"
        "- Bronze: Serbia\n\n**Women's Water Polo:**\n- Gold: United States\n- Silver: Spain\n- Bronze: Australia"
    )
    m = under(text, year=2012)
    assert m["m"] == gsb("CRO", "ITA", "SRB")
    assert m["f"] == gsb("USA", "ESP", "AUS")
    assert m["u"] == EMPTY


def test_underspecified_nested_bullets():
    text = (
        "- Men's Curling:\n  - Gold: Canada\n  - Silver: Finland\n  - Bronze: Sweden\n"
        "- Women's Curling:\n  - Gold: Sweden\n  - Silver: Switzerland\n  - Bronze: Canada"
    )
    m = under(text, year=2006)
    assert m["m"] == gsb("CAN", "FIN", "SWE") and m["f"] == gsb("SWE", "SUI", "CAN")


def test_underspecified_no_gender_is_u():
    text = "- Gold: South Korea\n- Silver: China\n- Bronze: Chinese Taipei"
    m = under(text, year=1988)
    assert m["u"] == gsb("KOR", "CHN", "TPE") and m["f"] == EMPTY and m["m"] == EMPTY


def test_underspecified_intro_sentence_gives_gender():
    text = (
        "At the 2008 Games, the medals for the men's 4 x 400 metres relay were awarded as follows:\n\n"
        "- Gold: United States\n- Silver: Bahamas\n- Bronze: Russia"
    )
    m = under(text, year=2008)
    assert m["m"] == gsb("USA", "BAH", "RUS") and m["u"] == EMPTY


def test_underspecified_prose_sentences_by_gender():
    text = (
        "In the men's tournament, Argentina won gold, Paraguay took silver and Italy claimed bronze. "
        "In the women's tournament, the United States won gold, Brazil silver and Germany bronze."
    )
    m = under(text, year=2004)
    assert m["m"] == gsb("ARG", "PAR", "ITA")
    assert m["f"] == gsb("USA", "BRA", "GER")


def test_underspecified_gender_carries_to_next_sentence():
    text = (
        "The men's handball event was won by Sweden, which earned the gold medal. The silver medal went "
        "to Croatia, and the bronze medal went to Spain."
    )
    m = under(text, year=2000)
    assert m["m"] == gsb("SWE", "CRO", "ESP") and m["u"] == EMPTY


def test_underspecified_parenthesised_gender():
    text = "- Gold: China (men's and women's teams)\n- Silver: Japan (men's team) and Germany (women's team)"
    m = under(text, year=2016)
    assert m["m"] == gsb("CHN", "JPN") and m["f"] == gsb("CHN", "GER")


def test_underspecified_lone_gender_mention_applies_to_list():
    text = (
        "- Gold: United States\n- Silver: Russia\n- Bronze: Romania\n\n"
        "The U.S. women's team was particularly strong that year."
    )
    m = under(text, year=2012)
    assert m["f"] == gsb("USA", "RUS", "ROU") and m["u"] == EMPTY


def test_underspecified_womens_event_without_results_gets_nothing():
    text = (
        "- Gold: Norway\n- Silver: Sweden\n- Bronze: Great Britain\n\n"
        "There was also a separate women's event, but I don't have its results."
    )
    m = under(text, year=2002)
    assert m["u"] == gsb("NOR", "SWE", "GBR") and m["f"] == EMPTY


def test_underspecified_second_list_for_women_only():
    text = (
        "The medal winners were:\n\n* Gold: Norway\n* Silver: Sweden\n* Bronze: Switzerland\n\n"
        "The women's event was also held, and the medal winners were:\n\n"
        "* Gold: Great Britain\n* Silver: Switzerland\n* Bronze: Canada"
    )
    m = under(text, year=2002)
    assert m["u"] == gsb("NOR", "SWE", "SUI") and m["f"] == gsb("GBR", "SUI", "CAN")


# --- data frame -------------------------------------------------------------------------------


def test_extract_frame_specified_and_underspecified():
    sdf = pd.DataFrame(
        {
            "Discipline": ["Hockey"],
            "Season": ["Summer"],
            "Year": ["2004"],
            "Event": ["Hockey"],
            "Gender": ["Men"],
            "real_g": ["AUS"],
            "real_s": ["NED"],
            "real_b": ["GER"],
            "gen_g": ["XXX"],
            "gen_s": [""],
            "gen_b": [""],
            "status": ["accepted"],
            "text": ["Gold: Australia\nSilver: Netherlands\nBronze: Germany and Spain"],
        }
    )
    out = extract_frame(sdf)
    assert list(out.columns) == list(sdf.columns) + ["flags", "unmapped"]
    assert out.loc[0, "gen_g"] == "AUS" and out.loc[0, "gen_b"] == "GER,ESP"
    cols = (
        ["Discipline", "Season", "Year", "Event"]
        + [f"real_{g}_{m}" for g in "fm" for m in "gsb"]
        + [f"gen_{g}_{m}" for g in "ufm" for m in "gsb"]
        + ["status", "text"]
    )
    udf = pd.DataFrame([dict.fromkeys(cols, "")])
    udf.loc[0, ["Year", "text"]] = ["2004", "**Men's:**\n- Gold: Argentina\n\n**Women's:**\n- Gold: United States"]
    uo = extract_frame(udf)
    assert uo.loc[0, "gen_m_g"] == "ARG" and uo.loc[0, "gen_f_g"] == "USA" and uo.loc[0, "gen_u_g"] == ""
    assert list(uo.columns) == cols + ["flags", "unmapped"]


def test_extraction_is_a_dataclass_with_expected_fields():
    x = extract_specified("Gold: Kenya", year=2000)
    assert isinstance(x, Extraction)
    assert set(vars(x)) >= {"medals", "status", "flags", "unmapped", "refusal"}


# --- agreement with the human annotation -------------------------------------------------------

DATA_DIR = os.environ.get("BIASLAB_DATA_DIR")
FILES = [(k, m) for k in ("specified", "underspecified") for m in ("gpt-4o-mini", "llama3.1-8b")]


def _triples(df: pd.DataFrame, under_: bool) -> list[set[tuple[str, str, str]]]:
    groups = ("u", "f", "m") if under_ else ("",)
    out = []
    for row in df.to_dict("records"):
        t = set()
        for g in groups:
            for m in "gsb":
                col = f"gen_{g}_{m}" if g else f"gen_{m}"
                t |= {(g, m, c.strip()) for c in str(row[col]).split(",") if c.strip()}
        out.append(t)
    return out


@pytest.mark.skipif(not DATA_DIR, reason="BIASLAB_DATA_DIR not set")
@pytest.mark.parametrize("kind, model", FILES)
def test_micro_f1_against_human_annotation(kind, model):
    path = Path(DATA_DIR) / "olympics" / "annotated" / kind / f"{model}.tsv"
    df = pd.read_csv(path, sep="\t", keep_default_na=False, dtype=str)
    pred = extract_frame(df)
    under_ = kind == "underspecified"
    gold, got = _triples(df, under_), _triples(pred, under_)
    tp = sum(len(a & b) for a, b in zip(gold, got))
    precision = tp / max(1, sum(map(len, got)))
    recall = tp / max(1, sum(map(len, gold)))
    f1 = 2 * precision * recall / (precision + recall)
    assert f1 >= 0.95, (kind, model, precision, recall, f1)


# --- more formats ------------------------------------------------------------------------------


def test_table_with_medal_columns_and_gender_rows():
    text = (
        "| Event | Gold | Silver | Bronze |\n|---|---|---|---|\n"
        "| Men's | United States | Spain | Argentina |\n| Women's | United States | Australia | Russia |"
    )
    m = under(text, year=2008)
    assert m["m"] == gsb("USA", "ESP", "ARG") and m["f"] == gsb("USA", "AUS", "RUS")


def test_table_with_rank_column():
    text = (
        "| Rank | Country | Time |\n|:---:|---|---|\n| 1 | Australia | 3:13.67 |\n"
        "| 2 | United States | 3:13.86 |\n| 3 | Brazil | 3:17.40 |\n| 4 | Germany | 3:17.77 |"
    )
    assert spec(text, year=2000) == gsb("AUS", "USA", "BRA")


def test_podium_order_is_ranked_and_flagged():
    x = extract_specified("The podium was Germany, Russia and France.", year=1994, gender="Men")
    assert x.medals["x"] == gsb("GER", "RUS", "FRA")
    assert "ranked-by-order" in x.flags


def test_ordinals_after_countries():
    text = "The event was won by the Soviet Union, with West Germany second and Hungary third."
    assert spec(text, year=1988) == gsb("URS", "FRG", "HUN")


def test_ahead_of_with_medals_in_parentheses():
    assert spec("Spain claimed gold ahead of Croatia (silver) and Serbia (bronze).", year=2012) == gsb(
        "ESP", "CRO", "SRB"
    )


def test_gender_scope_inside_a_sentence():
    text = (
        "Both the men's and women's team events were won by South Korea. In the men's event, "
        "Chinese Taipei took silver and Ukraine bronze; in the women's event, China took silver "
        "and Chinese Taipei bronze."
    )
    m = under(text, year=2004)
    assert m["m"] == gsb("KOR", "TPE", "UKR") and m["f"] == gsb("KOR", "CHN", "TPE")


def test_summary_that_contradicts_the_list_is_dropped():
    text = (
        "- Gold: United States\n- Silver: Canada\n- Bronze: Sweden\n\n"
        "Canada secured the gold medal by defeating the United States in the final."
    )
    x = extract_specified(text, year=2014, gender="Women")
    assert x.medals["x"] == gsb("USA", "CAN", "SWE")
    assert "conflicting-results" in x.flags


def test_unmapped_medal_slot():
    x = extract_specified("- Gold: Atlantis\n- Silver: Norway", year=2000, gender="Men")
    assert x.medals["x"] == gsb([], "NOR")
    assert x.unmapped == ["Atlantis"]
