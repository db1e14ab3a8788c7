"""The apps the middleware tests serve: each reads its middleware's options from the
environment (`options.py`), so that every test starts a server with limits of its own."""
