"""The service's answer as an install test checks it: waits (20 s at most) for GET /healthcheck
to answer 200, then POSTs the example config's request to /json six times and requires five
OK (200) and then OVER_LIMIT (429) with Retry-After.
Usage: json-check.py HTTP_PORT WHO (WHO names the test in its messages)."""
import json
import sys
import time
import urllib.error
import urllib.request

port, who = sys.argv[1], sys.argv[2]
base = f"http://127.0.0.1:{port}"


def call(path, body=None):
    request = urllib.request.Request(base + path, data=body and json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read().decode(), response.headers
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(), error.headers


deadline = time.monotonic() + 20
while True:
    try:
        status, body, _ = call("/healthcheck")
        if status == 200:
            break
    except OSError as error:
        status, body = None, str(error)
    if time.monotonic() > deadline:
        sys.exit(f"{who}: /healthcheck did not answer 200 within 20 s (last: {status} {body!r})")
    time.sleep(0.2)
print(f"ok: GET /healthcheck: {status} {body.strip()}")

request = {"domain": "example", "descriptors": [{"entries": [{"key": "path", "value": "/hello"}]}]}
answers = [call("/json", request) for _ in range(6)]
statuses = [status for status, _, _ in answers]
codes = [json.loads(body)["overallCode"] for _, body, _ in answers]
assert statuses == [200] * 5 + [429], f"{who}: POST /json statuses {statuses}"
assert codes == ["OK"] * 5 + ["OVER_LIMIT"], f"{who}: overall codes {codes}"
assert answers[5][2].get("Retry-After"), f"{who}: the 429 lacks Retry-After"
print(f"ok: POST /json: {statuses}, {codes[-1]} with Retry-After: {answers[5][2].get('Retry-After')}")
