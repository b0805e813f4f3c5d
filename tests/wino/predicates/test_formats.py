"""Survey and predicate files: reading, id checks, the released lists."""

import pytest

from biaslab.errors import DataError
from biaslab.wino.predicates.formats import check_ids, read_predicates, read_survey
from tests.conftest import requires_data


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_survey_rows_need_every_column_and_unique_ids(tmp_path):
    ok = read_survey(
        _write(
            tmp_path / "s.csv",
            'response_id,group,identity_noun,text\nr1,Jewish,Jews,"They say we are cheap, which hurts."\n',
        )
    )
    assert ok[0].text == "They say we are cheap, which hurts." and ok[0].row == 2
    with pytest.raises(DataError, match=r"row 3, column 'group': empty"):
        read_survey(_write(tmp_path / "s.csv", "response_id,group,identity_noun,text\nr1,J,Jews,a\nr2,,Jews,b\n"))
    with pytest.raises(DataError, match="'r1' already used in row 2"):
        read_survey(_write(tmp_path / "s.csv", "response_id,group,identity_noun,text\nr1,J,Jews,a\nr1,J,Jews,b\n"))
    with pytest.raises(DataError, match="no survey answers"):
        read_survey(_write(tmp_path / "s.csv", "response_id,group,identity_noun,text\n"))
    with pytest.raises(DataError, match="file not found"):
        read_survey(tmp_path / "missing.csv")


def test_predicates_must_use_the_survey_ids_and_groups(tmp_path):
    survey = read_survey(_write(tmp_path / "s.csv", "response_id,group,identity_noun,text\nr1,J,Jews,a\n"))
    preds = read_predicates(
        _write(tmp_path / "p.csv", "response_id,group,predicate,iteration\nr1,J,are late,1\nr1,J,,2\n")
    )
    assert [(p.predicate, p.extra["iteration"]) for p in preds] == [("are late", "1")]  # empty predicate skipped
    check_ids(preds, survey, "p.csv")
    with pytest.raises(DataError, match="'r2' is not an id of the survey"):
        check_ids(read_predicates(_write(tmp_path / "p.csv", "response_id,group,predicate\nr2,J,x\n")), survey, "p.csv")
    with pytest.raises(DataError, match="survey gives response 'r1' the group 'J'"):
        check_ids(read_predicates(_write(tmp_path / "p.csv", "response_id,group,predicate\nr1,K,x\n")), survey, "p.csv")
    with pytest.raises(DataError, match="column 'response_id': empty"):
        read_predicates(_write(tmp_path / "p.csv", "response_id,group,predicate\n,K,x\n"))
    assert read_predicates(tmp_path / "p.csv", need_ids=False)[0].response_id == ""


@requires_data
def test_released_lists_by_name():
    human = read_predicates("winosemitism", need_ids=False)
    gpt = read_predicates("gpt-winosemitism", need_ids=False)
    assert len(human) == 179 and human[0].group == "Jewish" and human[0].predicate == "are late"
    assert len(gpt) >= 200 and all(p.predicate for p in gpt)
    assert {p.group for p in read_predicates("gpt-winoqueer")} >= {"Lesbian", "Nonbinary"}
