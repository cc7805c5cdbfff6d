"""Kinds of identifier, one module a kind or family, each holding its recognizers (what finds an
item) beside its operators (what replaces it), as Presidio pairs a recognizer with an operator:

* ``contact``: e-mail addresses, @handles, URLs, IP addresses;
* ``phones``; ``payments``: cards, their expiry, IBANs, sort codes; ``id_numbers``: SSNs and
  numbers a word says are IDs; ``addresses``: streets and postcodes; ``locators``: devices,
  vehicles, flights, wallets, spots; ``spoken_digits``: digit strings said in words;
* quasi-identifiers (``protect="quasi"``): ``dates`` (births, events), ``ages``, ``cases``
  (application numbers), ``quantities`` (sums, durations, counts), ``groups`` (nationalities),
  ``occupations`` (and health conditions), ``spoken`` (dates, ages and sums said in words).

``base`` has what they share (``Recognizer``, ``Helpers``), ``redraw`` the character-level
draws, ``pattern`` a user's kind from a regular expression, and ``registry`` the object that
holds every kind in its default order (``REGISTRY``). Nothing here imports masking/ or
pseudonyms/: both use the registry.
"""
