"""Sources (files, river generators, Kafka) and sinks (JSON Lines files, stdout, Kafka)."""
