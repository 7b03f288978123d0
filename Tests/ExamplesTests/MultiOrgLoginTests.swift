import ChildProcess
import Foundation
import Testing

/// `swift run MultiOrgLogin`: its printout is the same on every run (random state, PKCE and token
/// values are shown as `…`), so the test checks all of it.
@Suite(.serialized)
struct MultiOrgLoginTests {
    @Test func twoOrgsTwoUsersCheckedCallbacksSwitchAndRevoke() async throws {
        let child = try await runExample("MultiOrgLogin")
        #expect(child.lines == [
            "== 1. Ada logs in to Acme with the user-agent flow (the article's flow), checked",
            "authorize: https://acme.embedded.salesforce.test/services/oauth2/authorize?response_type=token&client_id=3MVG9-embedded&redirect_uri=appkernel%3A%2F%2Foauth%2Fdone&display=touch&scope=api%20refresh_token&state=…&login_hint=ada%40acme.com",
            "callback:  appkernel://oauth/done#access_token=…&id=https%3A%2F%2Facme.embedded.salesforce.test%2Fid%2F00DACME000000001%2F005ADA000000001&instance_url=https%3A%2F%2Facme.embedded.salesforce.test&issued_at=…&refresh_token=…&scope=api%20refresh_token&signature=…&token_type=Bearer&state=…",
            "a callback for another request is refused: the callback's state does not match the request's: it may be forged or stale; start a new login",
            "an error callback is refused: the server refused: access_denied (end-user denied authorization)",
            "state matched; access token for user 005ADA000000001 in org 00DACME000000001",
            "identity: Ada Lovelace <ada@acme.com>, org 00DACME000000001",
            "  event: didLogin 005ADA000000001@00DACME000000001",
            "== 2. Bob logs in to Beta with the web-server flow and PKCE",
            "  event: willSwitch 005ADA000000001@00DACME000000001 → 005BOB000000002@00DBETA000000002",
            "  event: didSwitch 005ADA000000001@00DACME000000001 → 005BOB000000002@00DBETA000000002",
            "  event: didLogin 005BOB000000002@00DBETA000000002",
            "beta saw: GET /services/oauth2/authorize; POST /services/oauth2/token; GET /id/00DBETA000000002/005BOB000000002",
            "identity: Bob Beta <bob@beta.com>, org 00DBETA000000002",
            "logged in: ada@acme.com, bob@beta.com in orgs 00DACME000000001, 00DBETA000000002",
            "== 3. Switch between them; each one's REST client reaches their own org",
            "  event: willSwitch 005BOB000000002@00DBETA000000002 → 005ADA000000001@00DACME000000001",
            "  event: didSwitch 005BOB000000002@00DBETA000000002 → 005ADA000000001@00DACME000000001",
            "ada@acme.com sees: Acme Corporation",
            "  event: willSwitch 005ADA000000001@00DACME000000001 → 005BOB000000002@00DBETA000000002",
            "  event: didSwitch 005ADA000000001@00DACME000000001 → 005BOB000000002@00DBETA000000002",
            "bob@beta.com sees: Beta Labs",
            "== 4. Bob logs out: his files are deleted and his refresh token revoked at Beta",
            "  event: willLogout 005BOB000000002@00DBETA000000002 (userInitiated)",
            "  event: didLogout 005BOB000000002@00DBETA000000002 (userInitiated)",
            "  event: orgDidLogout 00DBETA000000002 (its last user left)",
            "beta saw: POST /services/oauth2/revoke",
            "still logged in: ada@acme.com",
            "== 5. A relaunch finds Ada's credentials on disk",
            "accounts after relaunch: ada@acme.com",
        ])
    }
}
