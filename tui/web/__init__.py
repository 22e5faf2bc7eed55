"""``apex-voice view``: the browser viewer of campaigns and sessions (docs/viewer.md).

The pages are plain HTML, CSS and JavaScript shipped in ``static/``; the data they show is written
per session (one file each) beside an index of the campaign's cells, so a large campaign's page
reads only its index and a session page reads only its own file.
"""
