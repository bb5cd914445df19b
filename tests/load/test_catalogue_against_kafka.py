"""The product's config catalogue against the test cluster's own statement of Kafka 4.0's rules
(reconciler/testing/log_config.py, written from Kafka's LogConfig, not from the catalogue). Two
statements written apart: where they disagree on a key, a type or a default, one of them is wrong."""

from reconciler import kafka_configs as product
from reconciler.testing import log_config as kafka


def test_the_same_keys():
    assert set(product.TOPIC_CONFIGS) == set(kafka.TOPIC_CONFIGS)


def test_the_same_defaults():
    differ = {
        k: (c.default, kafka.TOPIC_CONFIGS[k].default)
        for k, c in product.TOPIC_CONFIGS.items()
        if not product.same_config_value(k, c.default, kafka.TOPIC_CONFIGS[k].default)
    }
    assert differ == {}


def test_the_same_types():
    assert {k: c.type.name for k, c in product.TOPIC_CONFIGS.items()} == {k: c.type.name for k, c in kafka.TOPIC_CONFIGS.items()}


def test_every_value_kafka_refuses_below_a_minimum_the_product_refuses_too():
    for key, c in product.TOPIC_CONFIGS.items():
        if c.minimum is not None:
            below = str(c.minimum - 1)
            assert product.value_error(key, below) is not None, key
            try:
                kafka.validate({key: below})
            except kafka.ConfigError:
                continue
            raise AssertionError(f"{key}: the product's minimum {c.minimum} is above Kafka's")
