"""The Beam state-sampler patch (foldstream.job.engines.flink.beam_sampler) that every Flink operator applies
in its Python worker: bundles start and stop without a sampling thread to join."""

import threading

from apache_beam.runners.worker import statesampler
from apache_beam.utils.counters import CounterFactory

from foldstream.job.engines.flink.beam_sampler import skip_state_sampler_thread


def test_a_bundle_starts_and_stops_the_sampler_without_a_thread():
    assert skip_state_sampler_thread()
    assert skip_state_sampler_thread()  # idempotent: every operator's open() calls it
    sampler = statesampler.StateSampler("fnapi-step-1", CounterFactory())
    for _ in range(2):  # Beam reuses a bundle processor, and its sampler, bundle after bundle
        threads = threading.active_count()
        sampler.start()
        assert threading.active_count() == threads  # Beam's own start() adds its sampling thread
        assert statesampler.get_current_tracker() is sampler
        with sampler.scoped_state("fan-out", "process"):
            assert sampler.current_state().name.step_name == "fan-out"
        sampler.stop_if_still_running()
        assert sampler.finished and statesampler.get_current_tracker() is None
        sampler.reset()
