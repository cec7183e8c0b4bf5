from datetime import timedelta

from apps.predbat.predbat import Predbat


def test_energydataservice():
    my_predbat = Predbat()
    today = my_predbat.midnight_utc.strftime("%Y-%m-%d")
    tomorrow = (my_predbat.midnight_utc + timedelta(days=1)).strftime("%Y-%m-%d")
    rates = my_predbat.minute_rates({f"{today}T00:00": 10.0, f"{tomorrow}T00:00": 12.0})
    assert rates[0] == 10.0
    assert rates[1440] == 12.0
