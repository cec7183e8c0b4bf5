from lib.transactions.api import Buyer, create_transaction, list_by_buyer


class TestTransactionList:
    def test_list_by_buyer(self):
        buyer = Buyer("buyer-1")
        for i, amount in enumerate(("1.00", "2.50", "0.99"), start=1):
            create_transaction(buyer, f"uuid-{i}", amount)
        ids = list_by_buyer(buyer)
        assert sorted(ids) == sorted(["uuid-1", "uuid-2", "uuid-3"])

    def test_list_empty(self):
        assert list_by_buyer(Buyer("b")) == []
