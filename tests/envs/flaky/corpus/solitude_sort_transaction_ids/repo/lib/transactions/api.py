class Buyer:
    def __init__(self, uuid):
        self.uuid = uuid
        self.transactions = set()


def create_transaction(buyer, uuid, amount):
    buyer.transactions.add((uuid, amount))
    return uuid


def list_by_buyer(buyer):
    """The uuids of ``buyer``'s transactions (the relation has no order)."""
    return [uuid for uuid, _ in buyer.transactions]
