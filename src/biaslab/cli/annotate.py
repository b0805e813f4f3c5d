"""``biaslab annotate ...``: run a best-worst scaling annotation study in the browser
(:mod:`biaslab.annotate.project`, :mod:`biaslab.annotate.manage`, :mod:`biaslab.annotate.app`)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from biaslab.cli.common import console, new_app

app = new_app(
    "annotate", "Best-worst scaling annotation server: create a study, add annotators, serve, follow, export."
)


def _require(*modules: str) -> None:
    """A one-line error naming the pip extra when a server dependency is missing."""
    import importlib

    from biaslab.errors import ConfigError

    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            raise ConfigError(
                f"`biaslab annotate` needs the Python package {name!r}: pip install 'biaslab[annotate]'"
            ) from None


@app.command()
def init(
    project: Path = typer.Argument(
        ...,
        help="Project folder: a new one is created. On an existing study, changes the settings given "
        "(--cap, --per-tuple, --gold-rate, --gold-threshold, --gold-min, --construct, --instructions; the "
        "others keep their values) until the first tuple is shown; its items, tuples and gold tuples never change.",
    ),
    items: Path | None = typer.Option(
        None,
        "--items",
        help="CSV/TSV of texts: an id column (id or uid) and a text column (text or response), e.g. "
        "FSB_text.csv. Needed for a new study.",
    ),
    tuples: Path | None = typer.Option(
        None,
        "--tuples",
        help="CSV with Item1..Item4 columns (e.g. the FSB "
        "annotations file; repeated tuples count once). Default: design them.",
    ),
    construct: str | None = typer.Option(
        None,
        "--construct",
        help="What annotators rate, as a noun phrase "
        '(e.g. "anti-Muslim bias", "antisemitism"): the consent page, the '
        "default instructions, the question on every tuple, the admin page and the "
        "export name it. Default: gender bias (the Fifty Shades of Bias study).",
    ),
    seed: int | None = typer.Option(
        None,
        "--seed",
        help="Design the tuples with this seed (default 0 when "
        "--tuples is not given): items x appearances / 4 tuples of 4.",
    ),
    appearances: int | None = typer.Option(
        None,
        "--appearances",
        help="Designed tuples each item appears in (default 8: 2N tuples of 4); fewer for a small item set.",
    ),
    attempts: int | None = typer.Option(
        None, "--attempts", help="Random designs tried; the most balanced is kept (default 100)."
    ),
    per_tuple: int | None = typer.Option(
        None, "--per-tuple", help="Annotations each tuple gets, from distinct annotators (default 3)."
    ),
    cap: float | None = typer.Option(
        None,
        "--cap",
        help="Largest share of the tuples one annotator may be shown, answered and skipped alike. Default: "
        "8% of the tuples, but at least 160 (8% of the paper's 2,000) and at most half of them; so 0.08 from "
        "2,000 tuples up, and 0.5 (6 annotators at 3 per tuple) up to 320.",
    ),
    gold: Path | None = typer.Option(
        None,
        "--gold",
        help="Gold tuples: Item1..Item4, BestItem, WorstItem (the expected most and least negatively biased).",
    ),
    instructions: Path | None = typer.Option(
        None,
        "--instructions",
        help="Instructions shown to annotators "
        "(text or simple Markdown); default: the paper's guidelines, for "
        "--construct.",
    ),
    gold_rate: float | None = typer.Option(
        None, "--gold-rate", help="Share of handed-out tuples that are gold (default 0.1)."
    ),
    gold_threshold: float | None = typer.Option(
        None,
        "--gold-threshold",
        help="Flag annotators whose gold accuracy (best and worst both right) falls below this (default 0.7).",
    ),
    gold_min: int | None = typer.Option(
        None, "--gold-min", help="Gold answers needed before an annotator can be flagged (default 5)."
    ),
    id_column: str | None = typer.Option(None, "--id-column", help="Name of the id column in --items."),
    text_column: str | None = typer.Option(None, "--text-column", help="Name of the text column in --items."),
) -> None:
    """Create an annotation project (the texts, the tuples, the rules, in PROJECT/annotate.sqlite), or
    change the settings of one before its first tuple is shown."""
    from biaslab.annotate.db import db_path
    from biaslab.annotate.project import DEFAULT_CONSTRUCT, cap_line, init_project, plural
    from biaslab.errors import ConfigError

    if db_path(project).exists():
        _change(
            project,
            items,
            tuples_file=tuples,
            seed=seed,
            appearances=appearances,
            attempts=attempts,
            gold_file=gold,
            id_column=id_column,
            text_column=text_column,
            per_tuple=per_tuple,
            cap=cap,
            gold_rate=gold_rate,
            gold_threshold=gold_threshold,
            gold_min=gold_min,
            construct=construct,
            instructions_file=instructions,
        )
        return
    if items is None:
        raise ConfigError(f"{project} holds no study yet: give --items FILE, the texts to annotate")
    summary = init_project(
        project,
        items,
        tuples_file=tuples,
        seed=seed,
        per_tuple=per_tuple,
        cap=cap,
        gold_file=gold,
        instructions_file=instructions,
        gold_rate=gold_rate,
        gold_threshold=gold_threshold,
        gold_min=gold_min,
        id_column=id_column,
        text_column=text_column,
        construct=construct or DEFAULT_CONSTRUCT,
        appearances=appearances,
        attempts=attempts,
    )
    out = console(soft_wrap=True)
    out.print(
        f"created {project}: {plural(summary['items'], 'item')}, {plural(summary['tuples'], 'tuple')} "
        f"({summary['design']}), {plural(summary['gold'], 'gold tuple')}"
    )
    where = "your --instructions" if summary["custom_instructions"] else "the default instructions"
    out.print(
        f"construct: {summary['construct']} (named on the consent page, every question, the admin page "
        f"and the export; {where})"
    )
    if instructions is not None and construct is None:
        out.print(
            "note: the pages say gender bias; if your instructions ask about another bias, name it before "
            f'the study starts: biaslab annotate init {project} --construct "..."'
        )
    n, limit = summary["tuples"], summary["cap_count"]
    out.print(cap_line(summary["per_tuple"], n, summary["cap"], limit, default=summary["cap_default"]))
    out.print(f"next: biaslab annotate add-annotator {project} NAME [--admin]")


def _change(project: Path, items: Path | None, **options) -> None:
    """``init`` on an existing study: change the settings given (:func:`biaslab.annotate.amend.change_settings`)
    and say what changed, in one line, then what the cap means now."""
    from biaslab.annotate.amend import change_settings
    from biaslab.annotate.project import cap_line, default_cap, plural

    done = change_settings(project, items, **options)
    s = done["settings"]
    out = console(soft_wrap=True)
    if done["changes"]:
        out.print(f"changed {project}: {', '.join(done['changes'])}")
    else:
        out.print(f"{project}: nothing to change (the settings given are the study's already)")
    out.print(cap_line(s.per_tuple, s.n_tuples, s.cap, s.cap_count, default=s.cap == default_cap(s.n_tuples)))
    if done["consents_withdrawn"]:
        who = plural(done["consents_withdrawn"], "annotator")
        out.print(f"{who} who accepted the content warning will be shown it and the instructions again")
    if done["kept_own_instructions"]:
        out.print(f"note: your own instructions were kept; check that they ask about {s.construct}")


@app.command("add-annotator")
def add_annotator(
    project: Path = typer.Argument(..., help="Project folder."),
    name: str = typer.Argument(..., help="Login name: letters, digits, _ . - (starting with a letter or digit)."),
    admin: bool = typer.Option(False, "--admin", help="Give the account the admin page and status API."),
) -> None:
    """Create an account and print its initial password on the last line (shown only this once)."""
    _require("argon2")
    from biaslab.annotate.manage import add_account

    password = add_account(project, name, admin=admin)
    out = console(soft_wrap=True)
    out.print(
        f"created {'admin' if admin else 'annotator'} {name}; initial password (shown only now, valid until "
        "changed on the Password page):"
    )
    print(password)


@app.command("add-annotators")
def add_annotators(
    project: Path = typer.Argument(..., help="Project folder."),
    accounts: Path = typer.Argument(..., help="CSV/TSV/.xlsx with a 'name' column (and optionally 'admin': yes/no)."),
    passwords_out: Path | None = typer.Option(
        None,
        "--passwords-out",
        help="Where to write name,password "
        "(mode 0600; must not exist). Default: FILE_passwords.csv beside "
        "the accounts file.",
    ),
) -> None:
    """Create many accounts at once; their initial passwords go to a private file, not the screen."""
    _require("argon2")
    from biaslab.annotate.manage import add_accounts

    target = passwords_out or accounts.with_name(f"{accounts.stem}_passwords.csv")
    n = add_accounts(project, accounts, target)
    console(soft_wrap=True).print(
        f"created {n} accounts; initial passwords in {target} (readable by you only; "
        "hand each out privately, then delete the file)"
    )


@app.command("reset-password")
def reset_password(
    project: Path = typer.Argument(..., help="Project folder."),
    name: str = typer.Argument(..., help="The account's name."),
) -> None:
    """Give an account a new random password (printed on the last line) and log out its sessions."""
    _require("argon2")
    from biaslab.annotate.manage import reset_password as reset

    password = reset(project, name)
    console(soft_wrap=True).print(f"new password for {name} (shown only now):")
    print(password)


@app.command()
def serve(
    project: Path = typer.Argument(..., help="Project folder."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (loopback by default)."),
    port: int = typer.Option(8000, "--port", help="TCP port."),
    timeout: float = typer.Option(
        1800, "--timeout", help="Seconds after which a tuple handed out and not answered goes back to the pool."
    ),
    secure_cookies: bool = typer.Option(False, "--secure-cookies", help="Mark cookies Secure (behind HTTPS)."),
    allowed_host: list[str] = typer.Option(
        [],
        "--allowed-host",
        help="Host name[:port] annotators use to reach "
        "the server (repeatable); other Host/Origin headers are refused. "
        "Default: the --host address (and localhost when it is loopback).",
    ),
    idle_timeout: float = typer.Option(
        7200,
        "--idle-timeout",
        help="Seconds without a request after which a session ends (sessions end after 24 hours in any case).",
    ),
) -> None:
    """Serve the annotation pages and the JSON API (FastAPI + uvicorn) until Ctrl+C."""
    _require("argon2", "fastapi", "uvicorn")
    from biaslab.annotate.app import serve as run

    run(
        project,
        host=host,
        port=port,
        lease=timeout,
        secure_cookies=secure_cookies,
        idle=idle_timeout,
        allowed_hosts=allowed_host or None,
        echo=lambda line: console(soft_wrap=True).print(line),
    )


@app.command()
def status(
    project: Path = typer.Argument(..., help="Project folder."),
    as_json: bool = typer.Option(False, "--json", help="Print the status as JSON (the admin API's answer)."),
) -> None:
    """Progress, per-annotator counts, gold accuracy and flags, split-half reliability so far."""
    from biaslab.annotate.manage import status as project_status
    from biaslab.annotate.status_view import print_status

    data = project_status(project)
    if as_json:
        print(json.dumps(data, indent=2))
    else:
        print_status(data, console(soft_wrap=True))


@app.command()
def export(
    project: Path = typer.Argument(..., help="Project folder."),
    out: Path = typer.Option(
        ...,
        "--out",
        "-o",
        help="CSV to write (Item1..Item4, BestItem, WorstItem, tuple_id, "
        "annotator, positions, shown_at, submitted_at, seconds_on_task, feedback, "
        "construct); the skips go to OUT_skips.csv beside it.",
    ),
    exclude_flagged: bool = typer.Option(False, "--exclude-flagged", help="Leave out annotators flagged by gold."),
) -> None:
    """Write the study's annotations (gold tuples left out) for `biaslab bws score` / `reliability`; the
    construct column names what was rated (BestItem shows the most of it)."""
    from biaslab.annotate.export import skips_path
    from biaslab.annotate.manage import export as export_annotations

    n, skipped = export_annotations(project, out, include_flagged=not exclude_flagged)
    console(soft_wrap=True).print(f"wrote {n} annotations to {out} and {skipped} skips to {skips_path(out)}")
