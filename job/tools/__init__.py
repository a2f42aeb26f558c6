"""Tools that show a run's records to people: ``tables.py`` (the summary tables and progress
bar), ``watch.py`` (a live terminal table), ``plot.py`` (figures), ``report.py`` (one
self-contained HTML file of a run), ``dashboard/`` (a live web page on files and topics),
``produce.py`` (send a source into Kafka), ``schema.py`` (the JSON Schema of the records,
validation and reading records back from files and topics).

A tool reads records (files, Kafka topics) and may import ``operators`` (record types, the
verdict rule), ``connectors`` and ``job.config``; it never imports an engine.
"""
