"""The openai/<model> scorer against a small local OpenAI-compatible server (chat and moderations)."""

import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from biaslab.errors import ConfigError
from biaslab.fsb.judge_scale import SYSTEM_PROMPT
from biaslab.scorers import get_scorer

pytest.importorskip("openai")
# the judge's answer for each text, and the moderation scores
JUDGE = {"Women are bad drivers.": "0.8", "The table is red.": "Score: 0.05", "Men cook.": "I cannot say."}
CATEGORIES = {
    "Women are bad drivers.": {"harassment": 0.4, "hate": 0.7},
    "The table is red.": {"harassment": 0.01, "hate": 0.02},
}


@pytest.fixture()
def server():
    seen = {"chat": [], "moderations": []}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path.endswith("/chat/completions"):
                seen["chat"].append(body)
                text = body["messages"][-1]["content"]
                answer = {
                    "id": "c",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body["model"],
                    "choices": [
                        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": JUDGE[text]}}
                    ],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
            elif self.path.endswith("/moderations"):
                seen["moderations"].append(body)
                results = [
                    {
                        "flagged": False,
                        "categories": dict.fromkeys(CATEGORIES[t], False),
                        "category_scores": CATEGORIES[t],
                    }
                    for t in body["input"]
                ]
                answer = {"id": "m", "model": body["model"], "results": results}
            else:
                self.send_error(404)
                return
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", seen
    httpd.shutdown()
    httpd.server_close()


def test_judge_mode_sends_the_judge_prompt_and_parses_the_score(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("BIASLAB_API_KEY", raising=False)
    url, seen = server
    scorer = get_scorer("openai/tiny-judge", base_url=url)
    scores = scorer.score(list(JUDGE))
    assert scores[:2] == [0.8, 0.05] and math.isnan(scores[2])
    assert len(seen["chat"]) == 3
    for body in seen["chat"]:
        assert body["model"] == "tiny-judge" and body["temperature"] == 0.0
        assert body["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert scorer.identity.startswith("openai-judge:" + url)


def test_moderation_mode_reads_a_category_or_the_highest(server):
    url, seen = server
    texts = list(CATEGORIES)
    assert get_scorer("openai/omni-moderation-latest:mode=moderation", base_url=url).score(texts) == [0.7, 0.02]
    harassment = get_scorer("openai/omni-moderation-latest:mode=moderation,category=harassment", base_url=url)
    assert harassment.score(texts) == [0.4, 0.01]
    assert seen["moderations"][0] == {"model": "omni-moderation-latest", "input": texts}
    with pytest.raises(ConfigError, match="no category 'threat'.*harassment, hate"):
        get_scorer("openai/m:mode=moderation,category=threat", base_url=url).score(texts)


def test_bad_openai_specs_are_one_line_errors(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("BIASLAB_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="needs a model"):
        get_scorer("openai/")
    with pytest.raises(ConfigError, match="mode=judge or mode=moderation"):
        get_scorer("openai/x:mode=vibes")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        get_scorer("openai/omni-moderation-latest:mode=moderation")
