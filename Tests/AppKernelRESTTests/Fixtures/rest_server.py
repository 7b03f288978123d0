#!/usr/bin/env python3
"""A loopback stand-in for a Salesforce org's REST API, for AppKernelREST's tests.

Python standard library only. Prints "PORT <n>" first; exits when its stdin closes.
  POST /services/oauth2/token            refresh_token=R -> access token "A1"
  GET  /services/data/v62.0/query?q=...  contacts, two per page, nextRecordsUrl
  GET  /services/data/v62.0/query/c-<n>  the next page
  POST /services/data/v62.0/sobjects/Contact          201 {"id": ...}
  DELETE /services/data/v62.0/sobjects/Contact/<id>   204 | 400 DELETE_FAILED (has cases) | 404 NOT_FOUND
  PATCH  /services/data/v62.0/sobjects/Account/External_Id__c/<v>  300 [record URLs] for "DUP", else 201 created
  GET  /services/data/v62.0/sobjects/Account/describe  500 with an HTML page (a proxy's or a maintenance page)
  anything else                          404 NOT_FOUND (no "fields" key, as routing errors have none)
Every data call needs "Authorization: Bearer A1" (else 401 INVALID_SESSION_ID).
"""
import json, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

lock = threading.Lock()
contacts = [{"Id": "003%015d" % n, "Name": name} for n, name in
            enumerate(["Ada Lovelace", "Alan Turing", "Grace Hopper", "Linus Torvalds", "Margaret Hamilton"], 1)]
with_cases = {contacts[0]["Id"], contacts[2]["Id"]}
counter = [100]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, obj=None):
        body = b"" if obj is None else json.dumps(obj).encode()
        self.send_response(status)
        if body:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def error(self, status, code, message, fields=None):
        entry = {"message": message, "errorCode": code}
        if fields is not None:
            entry["fields"] = fields
        self.reply(status, [entry])

    def html(self, status, page):
        body = page.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html;charset=UTF-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def base(self):
        return "http://127.0.0.1:%d" % self.server.server_address[1]

    def authorized(self):
        if self.headers.get("Authorization") != "Bearer A1":
            self.error(401, "INVALID_SESSION_ID", "Session expired or invalid")
            return False
        return True

    def page(self, offset):
        with lock:
            rows = [dict(c, attributes={"type": "Contact"}) for c in contacts]
        end = min(offset + 2, len(rows))
        body = {"totalSize": len(rows), "done": end == len(rows), "records": rows[offset:end]}
        if end < len(rows):
            body["nextRecordsUrl"] = "/services/data/v62.0/query/c-%d" % end
        self.reply(200, body)

    def do_GET(self):
        parts = urlsplit(self.path)
        if not self.authorized():
            return
        if parts.path == "/services/data/v62.0/query":
            q = dict(parse_qsl(parts.query)).get("q", "")
            if "FROM Contact" not in q:
                return self.error(400, "MALFORMED_QUERY", "unsupported query: " + q)
            return self.page(0)
        if parts.path.startswith("/services/data/v62.0/query/c-"):
            return self.page(int(parts.path.rsplit("-", 1)[1]))
        if parts.path == "/services/data/v62.0/sobjects/Account/describe":
            return self.html(500, "<html><head><title>Service Unavailable</title><style>p { color: red }</style></head>"
                                  "<body><h1>Down for maintenance</h1><p>We&#39;ll be back at 10:00 &amp; sooner.</p></body></html>")
        self.error(404, "NOT_FOUND", "The requested resource does not exist")

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length).decode()
        path = urlsplit(self.path).path
        if path == "/services/oauth2/token":
            form = dict(parse_qsl(raw))
            if form.get("grant_type") == "refresh_token" and form.get("refresh_token") == "R":
                return self.reply(200, {"access_token": "A1", "instance_url": self.base(),
                                        "id": self.base() + "/id/00D000000000001/005000000000001", "token_type": "Bearer",
                                        "issued_at": "1700000000000"})
            return self.reply(400, {"error": "invalid_grant", "error_description": "expired access/refresh token"})
        if not self.authorized():
            return
        if path == "/services/data/v62.0/sobjects/Contact":
            fields = json.loads(raw or "{}")
            with lock:
                counter[0] += 1
                new = {"Id": "003%015d" % counter[0], "Name": fields.get("LastName", "")}
                contacts.append(new)
            return self.reply(201, {"id": new["Id"], "success": True, "errors": []})
        self.error(404, "NOT_FOUND", "The requested resource does not exist")

    def do_DELETE(self):
        if not self.authorized():
            return
        record_id = urlsplit(self.path).path.rsplit("/", 1)[1]
        with lock:
            found = [c for c in contacts if c["Id"] == record_id]
            if not found:
                return self.error(404, "NOT_FOUND", "The requested resource does not exist")
            if record_id in with_cases:
                return self.error(400, "DELETE_FAILED", "Your attempt to delete %s could not be completed because it is associated with the following cases." % found[0]["Name"], [])
            contacts.remove(found[0])
        self.reply(204)


    def do_PATCH(self):
        length = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(length)
        if not self.authorized():
            return
        prefix = "/services/data/v62.0/sobjects/Account/External_Id__c/"
        path = urlsplit(self.path).path
        if not path.startswith(prefix):
            return self.error(404, "NOT_FOUND", "The requested resource does not exist")
        if path[len(prefix):] == "DUP":
            return self.reply(300, ["/services/data/v62.0/sobjects/Account/001000000000001AAA",
                                    "/services/data/v62.0/sobjects/Account/001000000000002AAA"])
        self.reply(201, {"id": "001000000000003AAA", "success": True, "errors": [], "created": True})


def exit_when_parent_closes_stdin():
    sys.stdin.buffer.read()
    server.shutdown()


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=exit_when_parent_closes_stdin, daemon=True).start()
print("PORT %d" % server.server_address[1], flush=True)
server.serve_forever()
