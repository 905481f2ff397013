"""The browser client: static files the server sends as they are (no build step).

A package only so that its files ship as package data and are found with
``importlib.resources``; it holds no Python.
"""
