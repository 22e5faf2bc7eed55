"""Blame in one place: who is to blame when something fails, and what happens next.

- :mod:`.codes`: :class:`~.codes.FailureCode`, every word written or compared to say how a session
  failed (``result.json``'s ``agent_failure.kind``, the campaign's ``Blame.kind``), and the codes
  our adapters put on an ``AdapterError`` event;
- :mod:`.errors`: the exceptions the harness raises at the point where it called something outside
  itself (the agent, a provider, the sandbox, the judge, the cluster), so blame is by origin;
- :mod:`.origin_table`: the one table answering "what happens when X raises from origin Y", in the
  session (by the agent's kind) and in the campaign (by the exception's type).

It sits at the bottom of the harness (``tests/test_import_graph.py``), importing only
``sandbox.errors``: every adapter, the session, the text runner, the campaign and its Ray executor
produce and read its types.
"""
