"""The web service and page: ``create_app()`` in ``api.app``, ``smj serve`` in ``api.cli``.

Endpoints (OpenAPI schema at ``/openapi.json``), all under ``/api/v1`` but the page and health. FastAPI's
``/docs`` and ``/redoc`` are off: they load their scripts from a CDN, and nothing here leaves the machine.

==============================  ==================================================================
``GET  /``                      the phone page (``api/static``: no build step, nothing from elsewhere)
``GET  /healthz``               liveness and ``model_loaded``
``POST /api/v1/recognize``      multipart ``image``: detections, the grouped hand, groups, warnings
``POST /api/v1/score-photo``    multipart ``image`` + context fields + ``preset``: the same plus ``score``
``POST /api/v1/score``          JSON hand + context + preset: the score (the fields of ``smj score --json``)
``POST /api/v1/waits``          JSON hand one tile short: its waits with their best scores
``POST /api/v1/settle``         JSON round + preset + base: the payments and totals (``smj settle --json``)
``POST /api/v1/group``          JSON detections (possibly corrected): the grouped hand and warnings
``POST /api/v1/examples``       multipart ``image`` + ``detections`` + ``hand`` + ``consent`` (+ ``token``):
                                saved example, where the server allows it (``api.guard``)
``GET  /api/v1/presets``        the rules presets and their knobs
``GET  /api/v1/conditions``     the win conditions, what each implies and excludes (the page's choices)
``GET  /api/v1/tiles``          the detector classes (the page's palette)
==============================  ==================================================================

Not a win vs. malformed: ``/score`` answers 200 with ``valid: false`` and the reason for a hand that is
simply not a win (three suits, the void suit, no 4 sets + a pair) and 422 for an impossible one (wrong
tile count, a fifth copy, a winning tile not in the hand, a contradictory context) or an unknown tile or
preset; ``/score-photo`` always answers 200 with what it read, ``valid: false`` when that is not a win.
Every error is ``{"error": {"code", "message", "details"}}`` (codes in ``api.errors``).
"""
