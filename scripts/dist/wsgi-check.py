"""One middleware request through the installed wheel: a WSGI app behind
sluicegate.wsgi.RateLimitMiddleware (2 a minute per client address), served by the standard
library's wsgiref on 127.0.0.1, answers 200, 200, then 429 with Retry-After, and RateLimit-Policy
and RateLimit on every response. The server is shut down whatever happens."""

import sys
import threading
import urllib.error
import urllib.request
from wsgiref.simple_server import WSGIRequestHandler, make_server

import sluicegate
from sluicegate.wsgi import RateLimitMiddleware


def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"hello\n"]


class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.headers
    except urllib.error.HTTPError as error:
        return error.code, error.headers


def main():
    print(f"ok: sluicegate {sluicegate.__file__}")
    limited = RateLimitMiddleware(app, limits=[{"name": "ip", "key": "ip", "quota": "2/minute"}])
    server = make_server("127.0.0.1", 0, limited, handler_class=Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/"
        answers = [get(url) for _ in range(3)]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    statuses = [status for status, _ in answers]
    assert statuses == [200, 200, 429], f"statuses {statuses}, expected [200, 200, 429]"
    for status, headers in answers:
        for name in ("RateLimit-Policy", "RateLimit"):
            assert headers.get(name), f"a {status} lacks {name}"
    retry = answers[2][1].get("Retry-After")
    assert retry and int(retry) >= 1, f"the 429's Retry-After is {retry!r}"
    print(f"ok: statuses {statuses}; the 429 carries Retry-After: {retry}, "
          f"RateLimit: {answers[2][1].get('RateLimit')}")


if __name__ == "__main__":
    sys.exit(main())
