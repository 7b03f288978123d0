#!/usr/bin/env python3
"""A loopback stand-in for Salesforce's OAuth 2.0 endpoints, for AppKernelAuth's tests.

Python standard library only. Listens on 127.0.0.1 on an ephemeral port, prints "PORT <n>" on
its first line, and serves until its standard input is closed:

  GET  /services/oauth2/authorize  302 -> /login (a login page) -> 302 to the redirect URI with
                                   tokens in the fragment (response_type=token) or a code in
                                   the query (response_type=code, PKCE S256 remembered)
  POST /services/oauth2/token      authorization_code (verifier checked) | refresh_token
  POST /services/oauth2/revoke     revokes a refresh token (and its access tokens) or an access token
  GET  /id/<org>/<user>            the identity, for a valid bearer token
"""
import base64, hashlib, json, secrets, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

CLIENT_ID = "3MVG9-loopback"
USERS = {
    "ada@acme.com": ("00DACME00000001", "005ADA000000001", "Ada Lovelace"),
    "bob@acme.com": ("00DACME00000001", "005BOB000000002", "Bob Builder"),
    "cy@beta.com": ("00DBETA00000002", "005CY0000000003", "Cy Beta"),
}
REVOKE_FAILS_FOR = {"cy@beta.com"}
lock = threading.Lock()
codes, access_tokens, refresh_tokens = {}, {}, {}


def encode(params):
    return urlencode(params, quote_via=quote, safe="")


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def base(self):
        return "http://127.0.0.1:%d" % self.server.server_address[1]

    def reply(self, status, body=b"", headers=None, content_type="application/json"):
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if body:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def json(self, status, obj):
        self.reply(status, json.dumps(obj).encode())

    def redirect(self, location):
        self.reply(302, headers={"Location": location})

    def issue(self, user, with_refresh=True):
        org, uid, _ = USERS[user]
        access = "00D!" + secrets.token_urlsafe(16)
        with lock:
            access_tokens[access] = user
        params = {"access_token": access, "instance_url": self.base(), "id": "%s/id/%s/%s" % (self.base(), org, uid),
                  "issued_at": str(int(time.time() * 1000)), "signature": "c2lnbmF0dXJl+/=", "scope": "api refresh_token",
                  "token_type": "Bearer"}
        if with_refresh:
            refresh = "5Aep+" + secrets.token_urlsafe(16)
            with lock:
                refresh_tokens[refresh] = (user, [access])
            params["refresh_token"] = refresh
        return params

    def do_GET(self):
        parts = urlsplit(self.path)
        query = dict(parse_qsl(parts.query))
        if parts.path == "/services/oauth2/authorize":
            # The login page: the user types a password, then the server approves.
            return self.redirect("/login?" + parts.query)
        if parts.path == "/login":
            redirect_uri, state = query.get("redirect_uri", ""), query.get("state", "")
            if query.get("client_id") != CLIENT_ID:
                return self.reply(400, b"unknown client_id", content_type="text/plain")
            user = query.get("login_hint") or "ada@acme.com"
            if user not in USERS:
                return self.redirect(redirect_uri + "#" + encode({"error": "access_denied",
                                                                    "error_description": "end-user denied authorization", "state": state}))
            if query.get("response_type") == "token":
                params = self.issue(user)
                params["state"] = state
                return self.redirect(redirect_uri + "#" + encode(params))
            code = secrets.token_urlsafe(12) + "+/"
            with lock:
                codes[code] = (user, query.get("code_challenge"), redirect_uri)
            return self.redirect(redirect_uri + "?" + encode({"code": code, "state": state}))
        if parts.path.startswith("/id/"):
            token = self.headers.get("Authorization", "")[len("Bearer "):]
            with lock:
                user = access_tokens.get(token)
            if user is None:
                return self.json(403, [{"message": "Bad_OAuth_Token", "errorCode": "Bad_OAuth_Token"}])
            org, uid, name = USERS[user]
            if parts.path != "/id/%s/%s" % (org, uid):
                return self.json(403, [{"message": "wrong user", "errorCode": "INSUFFICIENT_ACCESS"}])
            first, last = name.split(" ")
            return self.json(200, {"user_id": uid, "organization_id": org, "username": user, "display_name": name,
                                   "email": user, "first_name": first, "last_name": last, "active": True,
                                   "user_type": "STANDARD", "language": "en_US", "locale": "en_US", "utcOffset": -28800000,
                                   "urls": {"rest": self.base() + "/services/data/v{version}/",
                                            "sobjects": self.base() + "/services/data/v{version}/sobjects/"},
                                   "mobile_policy": {"pin_length": 4, "screen_lock": 10}})
        self.reply(404, b"not found", content_type="text/plain")

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        form = dict(parse_qsl(self.rfile.read(length).decode()))
        path = urlsplit(self.path).path
        if path == "/services/oauth2/token":
            grant = form.get("grant_type")
            if grant == "authorization_code":
                with lock:
                    entry = codes.pop(form.get("code", ""), None)
                if entry is None:
                    return self.json(400, {"error": "invalid_grant", "error_description": "invalid authorization code"})
                user, challenge, redirect_uri = entry
                verifier = form.get("code_verifier", "")
                digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
                if digest != challenge:
                    return self.json(400, {"error": "invalid_grant", "error_description": "invalid code verifier"})
                if form.get("redirect_uri") != redirect_uri or form.get("client_id") != CLIENT_ID:
                    return self.json(400, {"error": "invalid_grant", "error_description": "redirect_uri mismatch"})
                return self.json(200, self.issue(user))
            if grant == "refresh_token":
                with lock:
                    entry = refresh_tokens.get(form.get("refresh_token", ""))
                if entry is None:
                    return self.json(400, {"error": "invalid_grant", "error_description": "expired access/refresh token"})
                params = self.issue(entry[0], with_refresh=False)
                with lock:
                    entry[1].append(params["access_token"])
                return self.json(200, params)
            return self.json(400, {"error": "unsupported_grant_type", "error_description": "grant type not supported"})
        if path == "/services/oauth2/revoke":
            token = form.get("token", "")
            with lock:
                refresh = refresh_tokens.get(token)
                user = refresh[0] if refresh else access_tokens.get(token)
            if user in REVOKE_FAILS_FOR:
                return self.reply(503, b"revocation unavailable", content_type="text/plain")
            with lock:
                if refresh:
                    del refresh_tokens[token]
                    for access in refresh[1]:
                        access_tokens.pop(access, None)
                    return self.reply(200)
                if token in access_tokens:
                    del access_tokens[token]
                    return self.reply(200)
            return self.json(400, {"error": "unsupported_token_type", "error_description": "this token type is not supported"})
        self.reply(404, b"not found", content_type="text/plain")


def exit_when_parent_closes_stdin():
    # The test holds our stdin open; when it closes it (stop(), or the test process dies) we exit.
    # Signals are not enough: a pyenv shim may stand between the test and this process.
    sys.stdin.buffer.read()
    server.shutdown()


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=exit_when_parent_closes_stdin, daemon=True).start()
print("PORT %d" % server.server_address[1], flush=True)
server.serve_forever()
