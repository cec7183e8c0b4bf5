import unittest
from unittest import mock

from civis import resources
from civis.resources import generate_classes

BASE = {"paths": {"/users": {}, "/users/{id}": {}}}
WITH_CHANNELS = {"paths": {"/users": {}, "/channels": {}, "/channels/{id}": {}}}


class TestBase(unittest.TestCase):
    def setUp(self):
        resources.get_swagger_spec.cache_clear()

    def tearDown(self):
        resources.get_swagger_spec.cache_clear()

    def test_generate_classes(self):
        with mock.patch.object(resources, "_fetch_spec", return_value=BASE):
            self.assertEqual(generate_classes("key"), ["users"])


class TestChannels(unittest.TestCase):
    def setUp(self):
        resources.get_swagger_spec.cache_clear()

    def tearDown(self):
        resources.get_swagger_spec.cache_clear()

    def test_generate_channel_classes(self):
        with mock.patch.object(resources, "_fetch_spec", return_value=WITH_CHANNELS):
            self.assertEqual(generate_classes("key"), ["channels", "users"])
