"""Path converters. ``id`` is a positive integer that fits a PostgreSQL bigint (at most 18 digits),
so a 5,000-digit id in a URL is a 404, not an overflow in the database."""


class IdConverter:
    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value) -> str:
        return str(int(value))
