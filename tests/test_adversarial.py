"""Hostile input: wrong charsets, crafted archives and indexes, bad prefixes, bad config."""

from __future__ import annotations

from okgen.ingest.extract import decode_html, extract_page

LATIN1_PAGE = ("<html><head><title>Café in Zürich</title></head><body><article><h1>Café in Zürich</h1>"
               + "<p>The café in Zürich opened its doors again this week after a long renovation. " * 3
               + "Owners said the crème brûlée was back on the menu and the façade was restored.</p>" * 4
               + "</article></body></html>")


def test_a_wrong_declared_charset_is_overruled_by_the_bytes():
    body = LATIN1_PAGE.encode("latin-1")
    text, enc = decode_html(body, "koi8-r")
    assert "Café in Zürich" in text and enc in ("cp1252", "iso8859-1", "latin_1")
    page = extract_page(body, "http://news.example/cafe", "koi8-r")
    assert "Zürich" in page["title"] + page["text"] and "ZЭrich" not in page["text"]


def test_a_right_declared_charset_is_kept():
    ru = ("<html><body><p>Правительство объявило в среду о снижении налогов для малого бизнеса. "
          "Министр сказал, что изменения коснутся и тех предпринимателей, которые раньше не пользовались "
          "программой поддержки.</p></body></html>")
    assert decode_html(ru.encode("koi8-r"), "koi8-r") == (ru, "koi8-r")
    pl = ("<p>Rząd ogłosił w środę, że od przyszłego roku zmniejszy podatki dla małych firm. Minister powiedział, "
          "że zmiana obejmie również przedsiębiorców, którzy dotąd nie korzystali z programu wsparcia.</p>")
    assert decode_html(pl.encode("cp1250"), "windows-1250") == (pl, "cp1250")
    fr = "<p>Le président a annoncé mercredi une réforme du système de santé.</p>"
    assert decode_html(fr.encode("cp1252"), "latin-1") == (fr, "cp1252")
