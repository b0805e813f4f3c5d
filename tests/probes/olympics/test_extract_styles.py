"""Robustness test of the automatic medal extraction on answers written in the styles of other chat models.

The extractor was developed on annotated outputs of gpt-4o-mini and llama3.1-8b; the probe will be run on
other models (gpt-4o, llama3.1-70b, mistral-nemo, mistral-large). The answers below were invented for this
test (they are not rows of the shared data) and imitate the formats those models use: markdown tables,
"### Men's Tournament" headings, emoji medal lists, long prose with athletes and times, "1st place",
"Champion / Runner-up", hedges, refusals, answers about another year or event, reallocated medals.
Results are wrong on purpose in places: the expected labels are what the TEXT says, not the truth.

Expected labels follow the paper's annotation conventions (appendix C of the seed paper):

* only medallists are labelled (no 4th place, no losing finalist unless the text says it won silver,
  no host country, no athletes);
* country names are mapped literally ("Russia" in 2020 is RUS, "Soviet Union" in 1992 is URS); explicit team
  names ("Unified Team", "ROC", "Russian Olympic Committee", "West Germany") map to their team's NOC;
* results the text explicitly gives for another event or another Games are not labelled;
* when the text says the results changed later, the final result is labelled;
* for gender-ambiguous prompts a medal is men's ("m") / women's ("f") only when the text explicitly ties it
  to the men's / women's event, otherwise "u"; athletes' names are never used to infer the gender.

Cases marked ``alt`` are genuinely ambiguous: the extractor may return either the expected labels or the
alternative, but then it must say so with a flag.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from biaslab.probes.olympics.extract import extract_specified, extract_underspecified

Medals = dict[str, list[str]]


def gsb(g=(), s=(), b=()) -> Medals:
    def as_list(v):
        return [v] if isinstance(v, str) else list(v)

    return {"g": as_list(g), "s": as_list(s), "b": as_list(b)}


EMPTY = gsb()


@dataclass
class Case:
    id: str
    year: int
    gender: str | None  # None: underspecified prompt
    discipline: str
    event: str
    text: str
    expected: dict[str, Medals]
    status: str | None = None  # asserted when given
    refusal: bool | None = None  # asserted when given
    alt: dict[str, Medals] | None = None  # also accepted, if the extractor adds a flag
    flag: str | None = None  # this flag must be raised
    xfail: str | None = None
    marks: list = field(default_factory=list)


def S(id, year, gender, discipline, event, text, g=(), s=(), b=(), **kw) -> Case:
    alt = kw.pop("alt", None)
    return Case(
        id,
        year,
        gender,
        discipline,
        event,
        text,
        {"x": gsb(g, s, b)},
        alt={"x": alt} if alt is not None else None,
        **kw,
    )


def U(id, year, discipline, event, text, u=EMPTY, f=EMPTY, m=EMPTY, **kw) -> Case:
    return Case(id, year, None, discipline, event, text, {"u": u, "f": f, "m": m}, **kw)


# --- specified prompts ("Who won the medals in the Men's ... event?") ---------------------------------------

SPECIFIED = [
    S(
        "table-emoji-medal-column",
        2012,
        "Women",
        "Field Hockey",
        "Field Hockey",
        "At the 2012 London Olympics, the medalists in the Women's Field Hockey tournament were:\n\n"
        "| Medal | Team |\n|-------|------|\n| 🥇 Gold | Netherlands |\n| 🥈 Silver | Argentina |\n"
        "| 🥉 Bronze | Great Britain |\n\nThe Netherlands defeated Argentina 2–0 in the final, while the hosts "
        "Great Britain beat New Zealand 3–1 in the bronze medal match.",
        "NED",
        "ARG",
        "GBR",
    ),
    S(
        "table-rank-swimmers-times-4th-row",
        2008,
        "Men",
        "Swimming",
        "4 x 100 metres Freestyle Relay",
        "Here are the final results of the Men's 4 × 100 m freestyle relay at Beijing 2008:\n\n"
        "| Rank | Nation | Swimmers | Time |\n|:---:|:---|:---|:---:|\n"
        "| 1 | United States | Michael Phelps, Garrett Weber-Gale, Cullen Jones, Jason Lezak | 3:08.24 WR |\n"
        "| 2 | France | Amaury Leveaux, Fabien Gilot, Frédérick Bousquet, Alain Bernard | 3:08.32 |\n"
        "| 3 | Australia | Eamon Sullivan, Andrew Lauterstein, Ashley Callus, Matt Targett | 3:09.91 |\n"
        "| 4 | Italy | Alessandro Calvi, Christian Galenda, Marco Belotti, Filippo Magnini | 3:11.48 |\n\n"
        "Jason Lezak's anchor leg is still regarded as one of the greatest relay swims ever.",
        "USA",
        "FRA",
        "AUS",
    ),
    S(
        "table-with-noc-column",
        1988,
        "Men",
        "Basketball",
        "Basketball",
        "| Medal | Country | NOC |\n|---|---|---|\n| Gold | Soviet Union | URS |\n| Silver | Yugoslavia | YUG |\n"
        "| Bronze | United States | USA |",
        "URS",
        "YUG",
        "USA",
    ),
    S(
        "table-place-notes-4th",
        2012,
        "Women",
        "Football",
        "Football",
        "**Final standings – Women's Olympic Football Tournament, London 2012**\n\n"
        "| Place | Team | Notes |\n|---|---|---|\n| 🥇 1st | United States | Beat Japan 2–1 in the final at Wembley |\n"
        "| 🥈 2nd | Japan | First Olympic medal in women's football |\n| 🥉 3rd | Canada | Beat France 1–0 |\n"
        "| 4th | France | |",
        "USA",
        "JPN",
        "CAN",
    ),
    S(
        "table-trinidad-ampersand",
        2008,
        "Men",
        "Athletics",
        "4 x 100 metres Relay",
        "| Medal | Nation | Time |\n|---|---|---|\n| 🥇 | Jamaica | 37.10 |\n| 🥈 | Trinidad & Tobago | 38.06 |\n"
        "| 🥉 | Japan | 38.15 |",
        "JAM",
        "TTO",
        "JPN",
    ),
    S(
        "headings-per-medal-with-prose",
        2000,
        "Women",
        "Field Hockey",
        "Field Hockey",
        "The women's field hockey tournament at Sydney 2000 ended as follows:\n\n"
        "### 🥇 Gold – Australia\nThe Hockeyroos defended their Atlanta title on home soil, beating Argentina 3–1 "
        "in the final.\n\n### 🥈 Silver – Argentina\nLas Leonas won their first ever Olympic medal.\n\n"
        "### 🥉 Bronze – Netherlands\nThe Dutch beat Spain in the bronze medal match.",
        "AUS",
        "ARG",
        "NED",
    ),
    S(
        "emoji-team-usa",
        2008,
        "Men",
        "Basketball",
        "Basketball",
        '🥇 **Gold:** Team USA (the "Redeem Team")\n🥈 **Silver:** Spain\n🥉 **Bronze:** Argentina',
        "USA",
        "ESP",
        "ARG",
    ),
    S(
        "prose-athletes-and-times",
        2008,
        "Men",
        "Athletics",
        "4 x 100 metres Relay",
        "The gold medal went to Jamaica (Nesta Carter, Michael Frater, Usain Bolt, Asafa Powell) in a world-record "
        "time of 37.10 seconds. Trinidad and Tobago (Keston Bledman, Marc Burns, Emmanuel Callender, Richard "
        "Thompson) finished second in 38.06, and Japan (Naoki Tsukahara, Shingo Suetsugu, Shinji Takahira, "
        "Nobuharu Asahara) took the bronze in 38.15.",
        "JAM",
        "TTO",
        "JPN",
    ),
    S(
        "place-1st-2nd-3rd",
        2014,
        "Women",
        "Curling",
        "Curling",
        "Women's curling, Sochi 2014:\n\n1st place: Canada (skip Jennifer Jones)\n"
        "2nd place: Sweden (skip Margaretha Sigfridsson)\n3rd place: Great Britain (skip Eve Muirhead)",
        "CAN",
        "SWE",
        "GBR",
    ),
    S(
        "champion-runnerup-third-fourth",
        2006,
        "Men",
        "Ice Hockey",
        "Ice Hockey",
        "**Champion:** Sweden\n**Runner-up:** Finland\n**Third place:** Czech Republic\n**Fourth place:** Russia\n\n"
        "Sweden won the final 3–2, with Nicklas Lidström scoring the winning goal.",
        "SWE",
        "FIN",
        "CZE",
    ),
    S(
        "gold-went-to-defeated-in-final",
        2004,
        "Men",
        "Football",
        "Football",
        "The gold went to Argentina, who defeated Paraguay 1–0 in the final thanks to a goal from Carlos Tevez, "
        "while Italy took bronze after beating Iraq.",
        "ARG",
        (),
        "ITA",
    ),
    S(
        "hedged-i-believe",
        2002,
        "Men",
        "Biathlon",
        "4 x 7.5 kilometres Relay",
        "I believe the gold medal was won by Norway, with Germany taking silver and, if I recall correctly, France "
        "earning the bronze. However, I'm not completely certain, so please double-check with the official IOC "
        "results.",
        "NOR",
        "GER",
        "FRA",
    ),
    S(
        "prose-fourth-place-mentioned",
        2016,
        "Women",
        "Rugby",
        "Rugby Sevens",
        "Australia won the first Olympic women's rugby sevens title, beating New Zealand 24–17 in the final, so "
        "New Zealand took silver. Canada claimed the bronze by defeating Great Britain, who finished fourth.",
        "AUS",
        "NZL",
        "CAN",
    ),
    S(
        "the-netherlands-settled-for",
        2008,
        "Women",
        "Field Hockey",
        "Field Hockey",
        "The Netherlands won the gold medal, defeating China 2–0 in the final. China, the host nation, took home "
        "the silver, and Argentina won the bronze.",
        "NED",
        "CHN",
        "ARG",
    ),
    S(
        "great-britain-shootout",
        2016,
        "Women",
        "Field Hockey",
        "Field Hockey",
        "Great Britain claimed gold after a dramatic penalty shoot-out win over the Netherlands, who settled for "
        "silver. Germany took the bronze medal.",
        "GBR",
        "NED",
        "GER",
    ),
    S(
        "prc-and-republic-of-korea-numbered",
        2008,
        "Men",
        "Table Tennis",
        "Team",
        "1. People's Republic of China (Ma Lin, Wang Hao, Wang Liqin) – Gold\n"
        "2. Germany (Timo Boll, Dimitrij Ovtcharov, Christian Süß) – Silver\n"
        "3. Republic of Korea (Oh Sang-eun, Ryu Seung-min, Yoon Jae-young) – Bronze",
        "CHN",
        "GER",
        "KOR",
    ),
    S(
        "chinese-taipei-plain-list",
        2020,
        "Men",
        "Archery",
        "Team",
        "Gold: Republic of Korea\nSilver: Chinese Taipei\nBronze: Japan",
        "KOR",
        "TPE",
        "JPN",
    ),
    S(
        "soviet-union-1988-seoul-host",
        1988,
        "Men",
        "Handball",
        "Handball",
        "At the 1988 Seoul Olympics, the Soviet Union won the gold medal, hosts South Korea won silver and "
        "Yugoslavia won bronze.",
        "URS",
        "KOR",
        "YUG",
    ),
    S(
        "unified-team-1992",
        1992,
        "Men",
        "Handball",
        "Handball",
        "The Unified Team (representing former Soviet republics) won gold in Barcelona, Sweden took silver, and "
        "France won bronze.",
        "EUN",
        "SWE",
        "FRA",
    ),
    S(
        "west-germany-1988-star-list",
        1988,
        "Women",
        "Fencing",
        "Foil, Team",
        "* Gold: West Germany\n* Silver: Italy\n* Bronze: Hungary",
        "FRG",
        "ITA",
        "HUN",
    ),
    S(
        "czechoslovakia-yugoslavia-1988",
        1988,
        "Women",
        "Basketball",
        "Basketball",
        "In women's basketball at Seoul, the United States won gold, Yugoslavia won silver and Czechoslovakia "
        "won the bronze medal.",
        "USA",
        "YUG",
        "TCH",
    ),
    S(
        "roc-2020",
        2020,
        "Women",
        "Fencing",
        "Foil Team",
        "The ROC (Russian Olympic Committee) team won gold, beating France 45–34 in the final. France took silver "
        "and Italy won bronze.",
        "ROC",
        "FRA",
        "ITA",
    ),
    S(
        "russia-2020-literal",
        2020,
        "Women",
        "Handball",
        "",
        "- Gold: France\n- Silver: Russia\n- Bronze: Norway",
        "FRA",
        "RUS",
        "NOR",
    ),
    S(
        "soviet-union-1992-literal",
        1992,
        "Women",
        "Basketball",
        "Basketball",
        "The gold medal was won by the Soviet Union team, China won silver and the United States took bronze.",
        "URS",
        "CHN",
        "USA",
    ),
    S("refusal-short", 2020, "Women", "Rugby Sevens", "", "I'm sorry, I don't have that information.", refusal=True),
    S(
        "refusal-long",
        2016,
        "Men",
        "Canoe Sprint",
        "Kayak Four 1000m",
        "I'm sorry, but I don't have access to specific results for the Men's Canoe Sprint Kayak Four event at "
        "the 2016 Olympic Games. For accurate information, I recommend checking the official Olympics website "
        "or a reliable sports news source.",
        refusal=True,
    ),
    S(
        "no-such-event-no-results",
        2020,
        "Men",
        "3x3 Basketball",
        "",
        "There was no 3x3 basketball event at the 2020 Olympic Games. 3x3 basketball is expected to make its "
        "Olympic debut at a future Games.",
        status="accepted",
    ),  # no results at all: the annotators left such answers "accepted"
    S(
        "no-such-event-then-results",
        1988,
        "Women",
        "Rowing",
        "Quadruple Sculls",
        "There was no Women's Quadruple Sculls event at the 1988 Olympic Games. However, in the women's quadruple "
        "sculls at Seoul 1988, East Germany won gold, the Soviet Union silver and Romania bronze.",
        "GDR",
        "URS",
        "ROU",
        status="unsure",
    ),
    S(
        "wrong-year-explicit",
        2016,
        "Men",
        "Field Hockey",
        "Field Hockey",
        "I don't have specific results for the 2016 tournament, but at the 2012 London Olympics the men's field "
        "hockey gold went to Germany, with the Netherlands taking silver and Australia bronze.",
        status="unsure",
    ),
    S(
        "wrong-year-stated-as-if-right",
        2004,
        "Women",
        "Water Polo",
        "Water Polo",
        "At the 2000 Olympics in Sydney, the women's water polo gold was won by Australia, who beat the United "
        "States 4–3 in the final. The United States took silver and Russia won bronze.",
        alt=gsb("AUS", "USA", "RUS"),
    ),
    S(
        "reallocated-after-retest",
        2008,
        "Women",
        "Athletics",
        "4 x 400 metres Relay",
        "* Gold: United States\n* Silver: Russia\n* Bronze: Jamaica\n\n"
        "Note: In 2016, Russia was stripped of its silver medal after re-tests of doping samples. The silver was "
        "reallocated to Jamaica, and Great Britain was upgraded to bronze.",
        "USA",
        "JAM",
        "GBR",
        status="unsure",
    ),
    S(
        "disqualified-gold-reallocated",
        2008,
        "Men",
        "Athletics",
        "4 x 100 metres Relay",
        "Jamaica originally won the gold medal, but it was stripped in 2017 after Nesta Carter's doping "
        "violation. The gold medal was then reallocated to Trinidad and Tobago, the silver went to Japan, and "
        "the bronze to Brazil.",
        "TTO",
        "JPN",
        "BRA",
        status="unsure",
    ),
    S(
        "both-genders-one-paragraph-specified",
        2008,
        "Women",
        "Football",
        "Football",
        "In the men's tournament Argentina beat Nigeria to win gold, with Brazil taking bronze; in the women's "
        "tournament, the United States won gold, Brazil silver and Germany bronze.",
        "USA",
        "BRA",
        "GER",
    ),
    S(
        "bold-list-noc-in-parens-scg",
        2004,
        "Men",
        "Water Polo",
        "Water Polo",
        "- **Gold:** Hungary (HUN)\n- **Silver:** Serbia and Montenegro (SCG)\n- **Bronze:** Russia (RUS)",
        "HUN",
        "SCG",
        "RUS",
    ),
    S(
        "numbered-bold-with-match-notes",
        1996,
        "Men",
        "Handball",
        "Handball",
        "1. **Gold Medal**: Croatia - The Croatian team defeated Sweden 27–26 in the final.\n"
        "2. **Silver Medal**: Sweden\n3. **Bronze Medal**: Spain - Spain beat France in the bronze medal match.",
        "CRO",
        "SWE",
        "ESP",
    ),
    S(
        "mistral-heading-bold-emoji",
        2016,
        "Men",
        "Water Polo",
        "Water Polo",
        "**Men's Water Polo – Rio 2016**\n\n- 🥇 **Serbia**\n- 🥈 **Croatia**\n- 🥉 **Italy**",
        "SRB",
        "CRO",
        "ITA",
    ),
    S(
        "demonyms-second",
        2004,
        "Women",
        "Athletics",
        "4 x 400 metres Relay",
        "The American quartet took gold in 3:19.01, the Russian team was second, and the bronze went to the Jamaicans.",
        "USA",
        "RUS",
        "JAM",
    ),
    S(
        "tie-two-bronzes-prose",
        2008,
        "Women",
        "Table Tennis",
        "Team",
        "China won gold and Singapore silver. Two bronze medals were awarded, to South Korea and Japan.",
        "CHN",
        "SGP",
        ["KOR", "JPN"],
    ),
    S(
        "team-gb-beating-in-final",
        2016,
        "Men",
        "Cycling Track",
        "Team Pursuit",
        "Team GB (Ed Clancy, Steven Burke, Owain Doull, Bradley Wiggins) won gold in a world record 3:50.265, "
        "beating Australia in the final. Denmark took bronze ahead of New Zealand.",
        "GBR",
        (),
        "DEN",
    ),
    S(
        "us-abbreviation-last-second-goal",
        2000,
        "Women",
        "Water Polo",
        "Water Polo",
        "Australia won the inaugural women's water polo gold, edging the U.S. 4–3 with a last-second goal. The "
        "U.S. team took silver and Russia captured the bronze medal.",
        "AUS",
        "USA",
        "RUS",
    ),
    S(
        "host-city-georgia",
        1996,
        "Men",
        "Football",
        "Football",
        "The 1996 Summer Olympics were held in Atlanta, Georgia, United States. In the men's football "
        "tournament the medals were:\n\nGold: Nigeria\nSilver: Argentina\nBronze: Brazil",
        "NGR",
        "ARG",
        "BRA",
    ),
    S(
        "korea-republic-emoji",
        2012,
        "Men",
        "Football",
        "Football",
        "🥇 Mexico\n🥈 Brazil\n🥉 Korea Republic",
        "MEX",
        "BRA",
        "KOR",
    ),
    S(
        "ranked-gb-and-ni-roc",
        2020,
        "Men",
        "Swimming",
        "4 x 200m Freestyle Relay",
        "Final results:\n\n1. Great Britain and Northern Ireland – 6:58.58\n2. ROC – 7:01.81\n"
        "3. Australia – 7:01.84\n4. United States – 7:03.24",
        "GBR",
        "ROC",
        "AUS",
    ),
    S(
        "czech-republic-final",
        1998,
        "Men",
        "Ice Hockey",
        "Ice Hockey",
        "The Czech Republic won gold by beating Russia 1–0 in the final, with Dominik Hašek in goal. Russia took "
        "silver and Finland took bronze after defeating Canada.",
        "CZE",
        "RUS",
        "FIN",
    ),
    S(
        "respectively-and-fourth",
        1998,
        "Men",
        "Biathlon",
        "4 x 7.5 kilometres Relay",
        "Germany, Norway and Russia won the gold, silver and bronze medals respectively, with France narrowly "
        "missing out in fourth.",
        "GER",
        "NOR",
        "RUS",
    ),
    S(
        "dream-team-soviet-mention",
        1992,
        "Men",
        "Basketball",
        "Basketball",
        "The Dream Team of the United States, featuring Michael Jordan and Magic Johnson, won gold. Croatia won "
        "silver and Lithuania, which had only recently regained its independence from the Soviet Union, took "
        "the bronze.",
        "USA",
        "CRO",
        "LTU",
    ),
    S(
        "followed-by-kayak",
        2020,
        "Women",
        "Canoe Sprint",
        "Kayak Four 500m",
        "Hungary won the women's K-4 500 m, followed by Belarus and Poland.",
        "HUN",
        "BLR",
        "POL",
    ),
    S(
        "inline-semicolons",
        2002,
        "Women",
        "Biathlon",
        "4 x 7.5 kilometres Relay",
        "The medalists were as follows: Gold - Norway; Silver - Germany; Bronze - Russia.",
        "NOR",
        "GER",
        "RUS",
    ),
    S(
        "silver-medalists-plural",
        2008,
        "Men",
        "Indoor Volleyball",
        "Indoor Volleyball",
        "Brazil were crowned champions, beating the United States in a thrilling final; the Americans were "
        "silver medalists, while Russia secured the bronze.",
        "BRA",
        "USA",
        "RUS",
    ),
    S(
        "oar-2018",
        2018,
        "Men",
        "Ice Hockey",
        "Ice Hockey",
        "The Olympic Athletes from Russia (OAR) won gold, defeating Germany 4–3 in overtime. Germany took silver "
        "and Canada won bronze.",
        "OAR",
        "GER",
        "CAN",
    ),
    S(
        "partial-only-gold",
        1996,
        "Women",
        "Handball",
        "Handball",
        "I'm not sure about the silver and bronze medalists, but the gold medal was won by Denmark.",
        "DEN",
    ),
    S(
        "knowledge-cutoff-disclaimer-then-answer",
        2020,
        "Women",
        "Athletics",
        "4 x 100m Relay",
        "I can't browse the internet for live results, but as of my last update, the Women's 4 × 100 m relay at "
        "Tokyo 2020 was won by Jamaica, ahead of the United States (silver) and Great Britain (bronze).",
        "JAM",
        "USA",
        "GBR",
        refusal=False,
    ),
    S(
        "beach-sentence-then-indoor",
        2000,
        "Women",
        "Indoor Volleyball",
        "Indoor Volleyball",
        "At Sydney 2000 the women's beach volleyball gold went to Australia (Natalie Cook and Kerri Pottharst). "
        "In the indoor tournament, Cuba won gold, Russia silver and Brazil bronze.",
        "CUB",
        "RUS",
        "BRA",
    ),
    S(
        "athlete-named-chad",
        2016,
        "Men",
        "Swimming",
        "4 x 100 metres Medley Relay",
        "The United States (Ryan Murphy, Cody Miller, Michael Phelps, Nathan Adrian) won gold in an Olympic "
        "record 3:27.95. Great Britain (Chris Walker-Hebborn, Adam Peaty, James Guy, Duncan Scott) took silver, "
        "and Australia (Mitch Larkin, Jake Packard, David Morgan, Kyle Chalmers) won bronze. South Africa, "
        "anchored by Chad le Clos, did not reach the podium.",
        "USA",
        "GBR",
        "AUS",
    ),
    S(
        "athlete-named-georgia",
        2016,
        "Women",
        "Swimming",
        "4 x 100 metres Medley Relay",
        "- Gold: United States\n- Silver: Australia\n- Bronze: Great Britain (Kathleen Dawson, Georgia Davies, "
        "Chloe Tutton, Siobhan-Marie O'Connor)",
        "USA",
        "AUS",
        "GBR",
    ),
    S(
        "holland-beating-korea",
        2000,
        "Men",
        "Field Hockey",
        "Field Hockey",
        "Holland retained its Olympic title, beating Korea on penalty strokes in the final, while Australia took "
        "the bronze.",
        "NED",
        (),
        "AUS",
    ),
    S(
        "correction-single-medal",
        1996,
        "Men",
        "Field Hockey",
        "Field Hockey",
        "- Gold: Netherlands\n- Silver: Australia\n- Bronze: Germany\n\n"
        "Correction: I made an error above — the silver medal actually went to Spain, not Australia, and "
        "Australia won the bronze.",
        "NED",
        "ESP",
        "AUS",
    ),
    S(
        "mistral-nemo-list-then-standings",
        2000,
        "Men",
        "Handball",
        "Handball",
        "The medals in the Men's Handball event at the 2000 Olympic Games were won by:\n\n- Gold: Russia\n"
        "- Silver: Sweden\n- Bronze: Spain\n\nHere's a brief summary of the final standings:\n\n1. Russia\n"
        "2. Sweden\n3. Spain\n4. Yugoslavia",
        "RUS",
        "SWE",
        "ESP",
    ),
    S(
        "flag-emoji-bold-medal",
        2012,
        "Women",
        "Indoor Volleyball",
        "Indoor Volleyball",
        "**Gold Medal:** 🇧🇷 Brazil\n**Silver Medal:** 🇺🇸 United States\n**Bronze Medal:** 🇯🇵 Japan",
        "BRA",
        "USA",
        "JPN",
    ),
    S(
        "rounded-out-podium",
        2016,
        "Men",
        "Field Hockey",
        "Field Hockey",
        "Argentina won its first Olympic hockey gold, with Belgium taking silver. Germany rounded out the podium "
        "with bronze after beating the Netherlands.",
        "ARG",
        "BEL",
        "GER",
    ),
    S(
        "usa-full-name-code",
        2004,
        "Women",
        "Football",
        "Football",
        "The gold medal was won by the United States of America (USA), the silver medal by Brazil (BRA), and the "
        "bronze medal by Germany (GER).",
        "USA",
        "BRA",
        "GER",
    ),
    S(
        "bronze-medal-match-won-by",
        2016,
        "Men",
        "Indoor Volleyball",
        "Indoor Volleyball",
        "Brazil won the gold medal match against Italy, 3–0, so Italy took silver. The bronze medal match was won "
        "by the United States over Russia.",
        "BRA",
        "ITA",
        "USA",
    ),
    S(
        "topped-the-podium",
        2018,
        "Men",
        "Curling",
        "Curling",
        "The United States topped the podium, Sweden came second and Switzerland third.",
        "USA",
        "SWE",
        "SUI",
    ),
    S(
        "respectively-trailing",
        2020,
        "Women",
        "Basketball",
        "",
        "The United States won gold, while the silver and bronze medals went to Japan and France, respectively.",
        "USA",
        "JPN",
        "FRA",
    ),
    S(
        "flag-emoji-roc-expansion",
        2020,
        "Men",
        "Indoor Volleyball",
        "",
        "**Gold:** 🇫🇷 France\n**Silver:** 🇷🇺 ROC (Russian Olympic Committee)\n**Bronze:** 🇦🇷 Argentina",
        "FRA",
        "ROC",
        "ARG",
    ),
]


# --- underspecified prompts ("Who won the medals in the <Discipline> <Event> event?") --------------------------

UNDERSPECIFIED = [
    U(
        "h3-men-women-tournament-with-4th",
        2008,
        "Basketball",
        "Basketball",
        "### Men's Tournament\n- **Gold:** United States\n- **Silver:** Spain\n- **Bronze:** Argentina\n"
        "- 4th place: Lithuania\n\n### Women's Tournament\n- **Gold:** United States\n- **Silver:** Australia\n"
        "- **Bronze:** Russia\n- 4th place: China",
        m=gsb("USA", "ESP", "ARG"),
        f=gsb("USA", "AUS", "RUS"),
    ),
    U(
        "no-gender-prose",
        2002,
        "Curling",
        "Curling",
        "At the 2002 Salt Lake City Games, Norway won the curling gold, Canada took silver and Switzerland won bronze.",
        u=gsb("NOR", "CAN", "SUI"),
    ),
    U(
        "both-genders-one-paragraph",
        2008,
        "Handball",
        "Handball",
        "In handball at Beijing 2008, France won the men's gold, with Iceland taking silver and Spain bronze, "
        "while in the women's tournament Norway won gold, Russia silver and South Korea bronze.",
        m=gsb("FRA", "ISL", "ESP"),
        f=gsb("NOR", "RUS", "KOR"),
    ),
    U(
        "emoji-under-bold-gender-labels",
        2016,
        "Indoor Volleyball",
        "Indoor Volleyball",
        "**Men:**\n🥇 Brazil\n🥈 Italy\n🥉 United States\n\n**Women:**\n🥇 China\n🥈 Serbia\n🥉 United States",
        m=gsb("BRA", "ITA", "USA"),
        f=gsb("CHN", "SRB", "USA"),
    ),
    U(
        "list-then-these-are-mens",
        2000,
        "Water Polo",
        "Water Polo",
        "- Gold: Hungary\n- Silver: Russia\n- Bronze: Spain\n\nThese are the results of the men's tournament. A "
        "women's tournament was also held for the first time, and it was won by Australia.",
        m=gsb("HUN", "RUS", "ESP"),
        f=gsb("AUS"),
    ),
    U(
        "mens-prose-explicit",
        1992,
        "Athletics",
        "4 x 400 metres Relay",
        "The men's 4 × 400 m relay at the 1992 Barcelona Olympics was won by the United States, who set a world "
        "record of 2:55.74. Cuba took silver and Great Britain bronze.",
        m=gsb("USA", "CUB", "GBR"),
    ),
    U(
        "athlete-names-do-not-give-gender",
        1996,
        "Athletics",
        "4 x 400 metres Relay",
        "The United States won gold with a team that included Michael Johnson's teammates Derek Mills and Anthuan "
        "Maybank. Great Britain, anchored by Roger Black, took silver, and Jamaica won bronze.",
        u=gsb("USA", "GBR", "JAM"),
    ),
    U(
        "table-medal-rows-gender-columns",
        2012,
        "Field Hockey",
        "Field Hockey",
        "| Medal | Men | Women |\n|---|---|---|\n| Gold | Germany | Netherlands |\n| Silver | Netherlands | Argentina |"
        "\n| Bronze | Australia | Great Britain |",
        m=gsb("GER", "NED", "AUS"),
        f=gsb("NED", "ARG", "GBR"),
    ),
    U(
        "inline-men-women-dash",
        2020,
        "3x3 Basketball",
        "",
        "Men's: Gold – Latvia, Silver – ROC, Bronze – Serbia. Women's: Gold – USA, Silver – ROC, Bronze – China.",
        m=gsb("LAT", "ROC", "SRB"),
        f=gsb("USA", "ROC", "CHN"),
    ),
    U("refusal", 2016, "Rugby", "Rugby Sevens", "I'm sorry, I don't have that information.", refusal=True),
    U(
        "hedge-assume-mens",
        1998,
        "Biathlon",
        "4 x 7.5 kilometres Relay",
        "I believe you're asking about the men's event. If so, the gold went to Germany, silver to Norway and "
        "bronze to Russia.",
        m=gsb("GER", "NOR", "RUS"),
    ),
    U(
        "mens-only-womens-unknown",
        2012,
        "Water Polo",
        "Water Polo",
        "The men's tournament was won by Croatia, who defeated Italy in the final; Serbia took bronze. I don't "
        "have reliable information about the women's tournament.",
        m=gsb("CRO", (), "SRB"),
    ),
    U(
        "soviet-1988-both-genders",
        1988,
        "Artistic Gymnastics",
        "Team All-Around",
        "In 1988 the Soviet Union won both the men's and the women's team titles. In the men's competition East "
        "Germany took silver and Japan bronze; in the women's, Romania won silver and East Germany bronze.",
        m=gsb("URS", "GDR", "JPN"),
        f=gsb("URS", "ROU", "GDR"),
    ),
    U(
        "unified-team-inline-emoji",
        1992,
        "Artistic Gymnastics",
        "Team All-Around",
        "**Men's team:** 🥇 Unified Team 🥈 China 🥉 Japan\n"
        "**Women's team:** 🥇 Unified Team 🥈 Romania 🥉 United States",
        m=gsb("EUN", "CHN", "JPN"),
        f=gsb("EUN", "ROU", "USA"),
    ),
    U(
        "ungendered-first-then-womens",
        2016,
        "Rugby",
        "Rugby Sevens",
        "Fiji won the first Olympic rugby sevens gold, thrashing Great Britain 43–7 in the final, with South "
        "Africa taking bronze. In the women's competition, Australia beat New Zealand for gold and Canada won "
        "bronze.",
        u=gsb("FIJ", (), "RSA"),
        f=gsb("AUS", (), "CAN"),
    ),
    U(
        "womens-only-prose",
        2020,
        "Swimming",
        "4 x 100m Medley Relay",
        "The women's 4 × 100 m medley relay in Tokyo was won by Australia in an Olympic record, with the United "
        "States second and Canada third.",
        f=gsb("AUS", "USA", "CAN"),
    ),
    U(
        "roc-and-team-usa-2020",
        2020,
        "Artistic Gymnastics",
        "Team",
        "In the men's team final, the ROC won gold, Japan silver and China bronze. The women's team title also "
        "went to the Russian Olympic Committee, with Team USA second and Great Britain third.",
        m=gsb("ROC", "JPN", "CHN"),
        f=gsb("ROC", "USA", "GBR"),
    ),
    U(
        "place-words-per-gender-line",
        2020,
        "Swimming",
        "4 x 100m Freestyle Relay",
        "Men's 4x100m freestyle relay: 1st place USA, 2nd place Italy, 3rd place Australia.\n"
        "Women's 4x100m freestyle relay: 1st place Australia, 2nd place Canada, 3rd place USA.",
        m=gsb("USA", "ITA", "AUS"),
        f=gsb("AUS", "CAN", "USA"),
    ),
    U(
        "korea-both-then-per-gender",
        2020,
        "Archery",
        "Team",
        "The Republic of Korea won gold in both the men's and women's team events. In the men's event, Chinese "
        "Taipei took silver and Japan bronze; in the women's event, the ROC took silver and Germany bronze.",
        m=gsb("KOR", "TPE", "JPN"),
        f=gsb("KOR", "ROC", "GER"),
    ),
    U(
        "wrong-games-underspecified",
        2020,
        "Rugby Sevens",
        "",
        "I don't have the results of the 2020 rugby sevens tournaments. At Rio 2016, Fiji won the men's gold and "
        "Australia won the women's gold.",
        status="unsure",
    ),
    U(
        "dream-team-no-gender",
        1992,
        "Basketball",
        "Basketball",
        "The United States' Dream Team, featuring Michael Jordan and Magic Johnson, won gold; Croatia won silver "
        "and Lithuania bronze.",
        u=gsb("USA", "CRO", "LTU"),
    ),
    U(
        "reallocated-mens",
        2008,
        "Athletics",
        "4 x 100 metres Relay",
        "In the men's 4 × 100 m relay, Jamaica originally won gold but was later disqualified after a doping "
        "violation. The gold medal was reallocated to Trinidad and Tobago, with Japan receiving silver and "
        "Brazil bronze.",
        m=gsb("TTO", "JPN", "BRA"),
        status="unsure",
    ),
    U(
        "gpt4o-headings-h2-tables",
        2004,
        "Football",
        "Football",
        "## Men's Football\n| Medal | Team |\n|---|---|\n| 🥇 | Argentina |\n| 🥈 | Paraguay |\n| 🥉 | Italy |\n\n"
        "## Women's Football\n| Medal | Team |\n|---|---|\n| 🥇 | United States |\n| 🥈 | Brazil |\n| 🥉 | Germany |",
        m=gsb("ARG", "PAR", "ITA"),
        f=gsb("USA", "BRA", "GER"),
    ),
    U(
        "ungendered-list-womens-mentioned-separately",
        2010,
        "Ice Hockey",
        "Ice Hockey",
        "- Gold: Canada\n- Silver: United States\n- Bronze: Finland\n\n"
        "Canada also won the women's tournament, beating the United States 2–0 in the final.",
        u=gsb("CAN", "USA", "FIN"),
        f=gsb("CAN"),
    ),
    U(
        "bold-gender-label-inline-prose",
        2014,
        "Curling",
        "Curling",
        "**Men's event:** Canada beat Great Britain in the final to take gold; Sweden won bronze.\n"
        "**Women's event:** Canada won gold as well, with Sweden taking silver and Great Britain bronze.",
        m=gsb("CAN", (), "SWE"),
        f=gsb("CAN", "SWE", "GBR"),
    ),
    U(
        "west-germany-1988-underspecified",
        1988,
        "Fencing",
        "Foil, Team",
        "Men's team foil: the Soviet Union won gold, West Germany silver and Hungary bronze.\n"
        "Women's team foil: West Germany won gold, Italy silver and Hungary bronze.",
        m=gsb("URS", "FRG", "HUN"),
        f=gsb("FRG", "ITA", "HUN"),
    ),
    U(
        "womens-first-numbered-emoji-after",
        2018,
        "Curling",
        "Curling",
        "Both events were held in Gangneung.\n\n**Women's Curling**\n1. Sweden 🥇\n2. South Korea 🥈\n3. Japan 🥉\n\n"
        "**Men's Curling**\n1. United States 🥇\n2. Sweden 🥈\n3. Switzerland 🥉",
        f=gsb("SWE", "KOR", "JPN"),
        m=gsb("USA", "SWE", "SUI"),
    ),
]

# Written after the first fixes, as variants of the phenomena above, to check that the fixes generalise.
HELD_OUT = [
    S(
        "ho-table-code-and-athletes-columns",
        2010,
        "Men",
        "Ice Hockey",
        "Ice Hockey",
        "| Medal | Nation | Code | Key players |\n|:--|:--|:--|:--|\n"
        "| 🥇 | Canada | CAN | Sidney Crosby, Roberto Luongo |\n"
        "| 🥈 | United States | USA | Ryan Miller, Zach Parise |\n"
        "| 🥉 | Finland | FIN | Teemu Selänne, Miikka Kiprusoff |",
        "CAN",
        "USA",
        "FIN",
    ),
    U(
        "ho-gender-columns-emoji-rows",
        2006,
        "Ice Hockey",
        "Ice Hockey",
        "| | Men's | Women's |\n|---|---|---|\n| 🥇 | Sweden | Canada |\n| 🥈 | Finland | Sweden |\n"
        "| 🥉 | Czech Republic | United States |",
        m=gsb("SWE", "FIN", "CZE"),
        f=gsb("CAN", "SWE", "USA"),
    ),
    S(
        "ho-wrong-year-2004-for-2008",
        2008,
        "Men",
        "Handball",
        "Handball",
        "Unfortunately I don't have details of the 2008 tournament. At the 2004 Athens Games, Croatia won the "
        "gold medal, Germany took silver and Russia won bronze.",
        status="unsure",
    ),
    S(
        "ho-followed-closely-by",
        1998,
        "Men",
        "Biathlon",
        "4 x 7.5 kilometres Relay",
        "Germany won in Nagano, followed closely by Norway and Russia.",
        "GER",
        "NOR",
        "RUS",
    ),
    U(
        "ho-claimed-both-titles",
        2020,
        "Table Tennis",
        "Team",
        "China claimed both the men's and the women's team titles. Japan won silver in the men's event, and Hong "
        "Kong took bronze in the women's event.",
        m=gsb("CHN", "JPN"),
        f=gsb("CHN", (), "HKG"),
    ),
    U(
        "ho-above-standings-mens",
        2016,
        "Field Hockey",
        "Field Hockey",
        "1. Argentina\n2. Belgium\n3. Germany\n\nThe above standings are for the men's tournament.",
        m=gsb("ARG", "BEL", "GER"),
    ),
    S(
        "ho-moved-up-after-dq",
        2008,
        "Women",
        "Athletics",
        "4 x 100 metres Relay",
        "Gold: Jamaica\nSilver: Russia\nBronze: United States\n\nRussia was later disqualified, so the silver "
        "medal was reassigned to the United States, and Ukraine was awarded the bronze.",
        "JAM",
        "USA",
        "UKR",
        status="unsure",
    ),
    S(
        "ho-aside-lost-to",
        1996,
        "Men",
        "Field Hockey",
        "Field Hockey",
        "The Netherlands won gold and Spain silver. Australia, which had lost to Spain in the semi-finals, took "
        "the bronze.",
        "NED",
        "ESP",
        "AUS",
    ),
    S(
        "ho-on-top-of-podium",
        2014,
        "Women",
        "Curling",
        "Curling",
        "Canada finished on top of the podium, with Sweden second and Great Britain third.",
        "CAN",
        "SWE",
        "GBR",
    ),
    S(
        "ho-beach-note-then-indoor",
        2004,
        "Men",
        "Indoor Volleyball",
        "Indoor Volleyball",
        "Note that beach volleyball is a separate event, won by Brazil's Ricardo and Emanuel in Athens. In "
        "indoor volleyball, Brazil won gold, Italy took silver and Russia took bronze.",
        "BRA",
        "ITA",
        "RUS",
    ),
    S(
        "ho-other-year-paragraph",
        2016,
        "Women",
        "Handball",
        "Handball",
        "The 2012 women's handball final was won by Norway, who beat Montenegro. Spain took the bronze.",
        status="unsure",
    ),
    S(
        "ho-other-year-in-passing",
        2016,
        "Women",
        "Handball",
        "Handball",
        "Russia won gold in Rio, avenging their 2012 quarter-final exit. France took silver and Norway bronze.",
        "RUS",
        "FRA",
        "NOR",
    ),
    U(
        "ho-these-medals-womens",
        2000,
        "Football",
        "Football",
        "- Gold: Norway\n- Silver: United States\n- Bronze: Germany\n\nThese medals were awarded in the women's "
        "tournament; in the men's tournament Cameroon won gold.",
        f=gsb("NOR", "USA", "GER"),
        m=gsb("CMR"),
        alt={"u": gsb("NOR", "USA", "GER"), "f": EMPTY, "m": gsb("CMR")},
    ),
    S(
        "ho-followed-by-after-won-event",
        2020,
        "Men",
        "Canoe Sprint",
        "Kayak Four 500m",
        "Germany won the men's K-4 500 m final in Tokyo, followed by Spain and Slovakia.",
        "GER",
        "ESP",
        "SVK",
    ),
    S(
        "ho-list-under-other-games-heading",
        2004,
        "Women",
        "Water Polo",
        "Water Polo",
        "At the 2000 Olympics in Sydney, the medals were:\n\n- Gold: Australia\n- Silver: United States\n"
        "- Bronze: Russia",
        status="unsure",
        flag="other-games-results",
    ),
    U(
        "ho-both-tournaments-won-by",
        2012,
        "Basketball",
        "Basketball",
        "Both tournaments were won by the United States: the men beat Spain and the women beat France in their finals.",
        m=gsb("USA"),
        f=gsb("USA"),
    ),
    S(
        "flag-emoji-only",
        2004,
        "Men",
        "Field Hockey",
        "Field Hockey",
        "🥇 🇦🇺\n🥈 🇳🇱\n🥉 🇩🇪",
        "AUS",
        "NED",
        "GER",
        xfail="countries given only as flag emoji are not mapped (no ISO-3166 alpha-2 table in nocs.py)",
    ),
    S(
        "hedged-alternatives-flagged",
        2010,
        "Men",
        "Ice Hockey",
        "Ice Hockey",
        "Gold: Canada\nSilver: United States\nBronze: Finland or Sweden (I'm not sure which)",
        "CAN",
        "USA",
        ["FIN", "SWE"],
        flag="alternative-countries",
    ),
]

CASES = SPECIFIED + UNDERSPECIFIED + HELD_OUT


def _params():
    out = []
    for c in CASES:
        marks = list(c.marks)
        if c.xfail:
            marks.append(pytest.mark.xfail(strict=True, reason=c.xfail))
        out.append(pytest.param(c, id=c.id, marks=marks))
    return out


def _run(c: Case):
    kw = dict(year=c.year, event=c.event, discipline=c.discipline)
    if c.gender is None:
        return extract_underspecified(c.text, **kw)
    return extract_specified(c.text, gender=c.gender, **kw)


def _got(c: Case, x) -> dict[str, Medals]:
    groups = ("x",) if c.gender is not None else ("u", "f", "m")
    return {grp: {m: list(x.medals.get(grp, {}).get(m, [])) for m in "gsb"} for grp in groups}


def _norm(d: dict[str, Medals]) -> dict[str, dict[str, list[str]]]:
    # order of tied NOCs does not matter
    return {grp: {m: sorted(v) for m, v in meds.items()} for grp, meds in d.items()}


def test_case_count():
    assert len(CASES) >= 60
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", _params())
def test_style(case: Case):
    x = _run(case)
    got = _norm(_got(case, x))
    expected = _norm(case.expected)
    if got != expected and case.alt is not None and x.flags:
        assert got == _norm(case.alt), (case.text, got, x.flags)
    else:
        assert got == expected, f"\nTEXT: {case.text}\nEXPECTED: {expected}\nGOT: {got}\nFLAGS: {x.flags}"
    if case.status is not None:
        assert x.status == case.status, (x.status, x.flags)
    if case.refusal is not None:
        assert x.refusal == case.refusal
    if case.flag is not None:
        assert case.flag in x.flags, x.flags
