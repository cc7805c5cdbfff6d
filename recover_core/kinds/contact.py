"""Where a person is reached: e-mail addresses, @handles, URLs and IP addresses.

An e-mail, URL or handle becomes one of the same shape whose names are the pseudonyms of those
names and whose domain is drawn from a list of real-looking ones (never the original's letters:
"stanford.edu" once became "lpuiwkmw.edu", its length and hyphens kept); an IP address one of
the same version.
"""
from __future__ import annotations

import ipaddress
import random
import re

from recover_core.kinds.base import Helpers, Recognizer
from recover_core.kinds.redraw import rand_digits, scramble


class Email(Recognizer):
    label = "EMAIL"
    needs = "@"
    # A domain, or an address literal ("john@[192.168.0.1]", RFC 5321), which is as private.
    pattern = re.compile(r"(?<![\w.+%-])[\w.+%-]{1,64}@(?:[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,8}"
                         r"|\[\d{1,3}(?:\.\d{1,3}){3}\])")

    def validate(self, item: str, text: str, start: int) -> bool:
        return not item.startswith(".") and (item.endswith("]") or re.search(r"\.[A-Za-z]{2,}$", item) is not None)


class Handle(Recognizer):
    label = "HANDLE"
    needs = "@"
    pattern = re.compile(r"(?<![\w@.])@[A-Za-z0-9_](?:[A-Za-z0-9_.]{0,28}[A-Za-z0-9_])?(?![\w@])")


class Url(Recognizer):
    label = "URL"
    needs = "dot"
    TLDS = ("com|org|net|edu|gov|io|co|uk|de|fr|es|it|nl|be|ch|at|se|no|dk|fi|pl|cz|ru|cn|jp|kr|in|au|nz|ca|us|"
            "br|mx|ar|za|ie|pt|gr|tr|info|biz|me|tv|ly|app|dev|ai|xyz")
    pattern = re.compile(
        r"(?:https?://|www\.)[^\s<>\"'()\[\]]{1,500}"
        r"|(?<![\w@.-])(?:[A-Za-z0-9-]{1,63}\.){1,6}(?:" + TLDS + r")(?:/[^\s<>\"'()\[\]]{0,400})?(?![\w@-])",
        re.I)

    def bounds(self, m: re.Match[str]) -> tuple[int, int]:
        a, b = m.start(), m.end()
        while b > a and m.string[b - 1] in ".,;:!?'\"":  # sentence punctuation is not the URL's
            b -= 1
        return a, b


class IpAddress(Recognizer):
    label = "IP_ADDRESS"
    needs = "digit"
    pattern = re.compile(r"(?<![\w.:])(?:\d{1,3}\.){3}\d{1,3}(?!\w|\.\d|:\w)"
                         r"|(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{1,4}(?![\w:])"
                         r"|(?<![\w:])(?:[0-9A-Fa-f]{1,4}:){1,7}:(?![\w:])")

    def validate(self, item: str, text: str, start: int) -> bool:
        if ":" in item and (item.count(":") < 3 and "::" not in item):  # "7:15:30" is a time
            return False
        try:
            ipaddress.ip_address(item)
        except ValueError:
            return False
        return True


def ip_address(original: str, rng: random.Random, helpers: Helpers) -> str:
    ip = ipaddress.ip_address(original)
    while True:
        if ip.version == 4:
            new = ipaddress.IPv4Address(rng.getrandbits(32))
            if not new.is_global and not ip.is_private:
                continue
            if ip.is_private and not new.is_private:  # a home network address stays one
                new = ipaddress.IPv4Address(f"192.168.{rng.randint(0, 255)}.{rng.randint(1, 254)}")
        else:
            new = ipaddress.IPv6Address(rng.getrandbits(128))
            if ip.compressed.startswith("2001:db8"):
                new = ipaddress.IPv6Address(int(ipaddress.IPv6Address("2001:db8::")) | rng.getrandbits(96))
        if new != ip:
            text = new.exploded if ip.exploded == original.lower() and ip.version == 6 else str(new)
            return text.upper() if original.isupper() else text


PUBLIC_DOMAINS = frozenset("""gmail.com googlemail.com yahoo.com yahoo.co.uk hotmail.com hotmail.co.uk outlook.com
    live.com msn.com aol.com icloud.com me.com mail.com gmx.de gmx.net web.de proton.me protonmail.com yandex.ru
    mail.ru qq.com 163.com example.com example.org example.net orange.fr free.fr libero.it btinternet.com
    comcast.net verizon.net att.net facebook.com linkedin.com twitter.com x.com instagram.com github.com
    youtube.com tiktok.com reddit.com medium.com t.me wa.me""".split())
# Path words of profile pages that name no one ("linkedin.com/in/...").
PATH_WORDS = frozenset("in u user users profile profiles p watch channel c status posts en people pub company www".split())
_PARTS = re.compile(r"[^\W\d_]+|\d+|[\W_]", re.UNICODE)


def _rebuild_words(s: str, rng: random.Random, helpers: Helpers, keep: frozenset[str] = frozenset()) -> str:
    """Letters and digits of ``s`` replaced: a name by its pseudonym, another word by random
    letters of its length, digits by digits; separators stay."""
    parts = _PARTS.findall(s)
    alpha = [p for p in parts if p.isalpha() and p.lower() not in keep]
    renamed = dict(zip(alpha, helpers.rename(alpha))) if alpha else {}
    out = []
    for p in parts:
        if p.isdigit():
            out.append(rand_digits(len(p), rng))
        elif p.isalpha() and p.lower() not in keep:
            new = renamed.get(p) or scramble(p, rng)
            out.append(new.upper() if p.isupper() and len(p) > 1 else new.capitalize() if p[:1].isupper() else new.lower())
        else:
            out.append(p)
    return "".join(out)


# The domains a fake e-mail or URL gets: word + word, as companies and schools name theirs.
# A label redrawn letter for letter kept its length and hyphens ("stanford.edu" became
# "lpuiwkmw.edu", matched against a list of domains by shape); a draw from this list keeps
# nothing of the original but its top-level domain.
DOMAIN_HEADS = """north south east west blue green red silver gold oak pine cedar maple river lake bay harbor
    summit peak ridge valley stone iron bright clear swift true first prime grand royal union liberty pioneer
    heritage keystone crown eagle falcon hawk fox wolf bear lion star sun moon sky cloud rain snow frost spring
    summer autumn winter field meadow forest grove park bridge gate tower castle haven port shore coast island
    mountain hill rock crest vista horizon compass anchor beacon lantern arrow""".split()
DOMAIN_TAILS = """field wood land view point line works labs tech soft net data systems group partners media
    press health care bank trust capital ventures solutions logic core hub base way path side stone brook dale
    ford gate vale mark wise craft well spring hill crest wave light""".split()
# Labels under the registrable one ("cs.stanford.edu"): common subdomains, drawn likewise.
SUBDOMAINS = "mail web www2 portal my app apps news shop blog info members dept cs staff students lists support".split()


def _domain(host: str, helpers: Helpers) -> str:
    """A real-looking domain for ``host``, drawn with a stream keyed by the host itself, so
    one host gets one fake domain within a mapping. Public webmail and example domains stay:
    they name no one; so do the top-level domain (with "co" of "co.uk") and "www"."""
    if host.lower() in PUBLIC_DOMAINS or host.lower().removeprefix("www.") in PUBLIC_DOMAINS:
        return host
    labels = host.split(".")
    tail = 2 if len(labels) > 2 and labels[-2].lower() in ("co", "com", "org", "ac", "gov") else 1
    rng = helpers.keyed("domain:" + host.lower().removeprefix("www."))
    out = []
    for i, lab in enumerate(labels):
        if i >= len(labels) - tail or lab.lower() == "www" or not lab:
            out.append(lab)
            continue
        own = lab.lower()
        if i == len(labels) - tail - 1:  # the registrable name: "stanford"
            new = own
            while new == own:
                new = rng.choice(DOMAIN_HEADS) + rng.choice(DOMAIN_TAILS)
        else:
            new = rng.choice([w for w in SUBDOMAINS if w != own])
        out.append(new.upper() if lab.isupper() and len(lab) > 1 else new)
    return ".".join(out)


def email(original: str, rng: random.Random, helpers: Helpers) -> str:
    local, _, host = original.rpartition("@")
    if host.startswith("["):  # an address literal: another address of the same kind
        return _rebuild_words(local, rng, helpers) + "@[" + ip_address(host[1:-1], rng, helpers) + "]"
    return _rebuild_words(local, rng, helpers) + "@" + _domain(host, helpers)


def handle(original: str, rng: random.Random, helpers: Helpers) -> str:
    return "@" + _rebuild_words(original[1:], rng, helpers)


def url(original: str, rng: random.Random, helpers: Helpers) -> str:
    m = re.match(r"(?i)(https?://)?([^/?#]+)(.*)", original)
    if not m:
        return _rebuild_words(original, rng, helpers)
    scheme, host, rest = m.group(1) or "", m.group(2), m.group(3)
    name, colon, port = host.partition(":")
    try:  # a host given by its address ("http://192.168.0.1/admin"): another address, not a domain
        new_host = ip_address(name, rng, helpers) + colon + port
    except ValueError:
        new_host = _domain(host, helpers)
    return scheme + new_host + _rebuild_words(rest, rng, helpers, keep=PATH_WORDS)


OPERATORS = {"EMAIL": email, "HANDLE": handle, "URL": url, "IP_ADDRESS": ip_address}
