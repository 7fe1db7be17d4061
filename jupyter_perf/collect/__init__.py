"""Turn Spark into a ``Run``: Spark sessions (classic, Connect), the measuring windows, the
sparkmeasure listener, the REST client (live UI or History Server), the memory and host-CPU
samplers, the event-log reader, and each source's field map (``docs/architecture.md``)."""
