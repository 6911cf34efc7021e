"""Django's database sessions with a new session written in one statement (``SESSION_ENGINE``).

Django's ``db`` backend makes a session with a read and a transaction: ``SELECT`` whether a random
key exists, then ``BEGIN``, ``INSERT``, ``COMMIT``. Every study-link participant makes one when
they open their link (issue 19's benchmark, ``tests/studies/test_link_statements.py``), so here a
new session is the ``INSERT`` alone: the key is 32 characters of 36 (about 165 bits, as Django
draws it), and the table's primary key refuses a clash, which ``create`` retries with another
key (``CreateError``), as it does when the read raced another insert. Outside a transaction an
insert needs none (a failed one leaves the connection usable); inside one, Django's savepoint is
kept. Loading, updating and deleting sessions are Django's.
"""

from __future__ import annotations

from django.contrib.sessions.backends import db
from django.contrib.sessions.backends.base import VALID_KEY_CHARS, CreateError
from django.db import IntegrityError, connections, router
from django.utils.crypto import get_random_string


class SessionStore(db.SessionStore):
    def _get_new_session_key(self) -> str:
        """A random key, not looked up first: a clash fails the insert (``save``), and ``create``
        draws again."""
        return get_random_string(32, VALID_KEY_CHARS)

    def save(self, must_create: bool = False) -> None:
        """Django's ``save``, but a new session (``must_create``) outside a transaction is one
        ``INSERT`` without ``BEGIN``/``COMMIT``; raises CreateError when its key is taken."""
        if not must_create or self.session_key is None:
            return super().save(must_create=must_create)
        obj = self.create_model_instance(self._get_session(no_load=True))
        using = router.db_for_write(self.model, instance=obj)
        if connections[using].in_atomic_block:
            return super().save(must_create=True)
        try:
            obj.save(force_insert=True, using=using)
        except IntegrityError:
            raise CreateError from None
