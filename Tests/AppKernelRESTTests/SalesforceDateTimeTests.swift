import Foundation
import Testing
import AppKernelREST

struct SalesforceDateTimeTests {
    @Test func instantsAreWrittenAsSalesforceWritesThem() {
        #expect(SalesforceDateTime.string(fromMillis: 1_795_514_400_000) == "2026-11-24T10:00:00.000+0000")
        #expect(SalesforceDateTime.string(fromMillis: 0) == "1970-01-01T00:00:00.000+0000")
        #expect(SalesforceDateTime.string(fromMillis: 951_782_400_123) == "2000-02-29T00:00:00.123+0000")
        #expect(SalesforceDateTime.string(fromMillis: -1) == "1969-12-31T23:59:59.999+0000")
    }

    @Test(arguments: [("2026-11-24T10:00:00.000+0000", 1_795_514_400_000), ("2026-11-24T10:00:00Z", 1_795_514_400_000),
                      ("2026-11-24T11:00:00+01:00", 1_795_514_400_000), ("2026-11-24T02:00:00.5-0800", 1_795_514_400_500),
                      ("2000-02-29T00:00:00.123Z", 951_782_400_123)] as [(String, Int64)])
    func literalsInEveryOffsetFormParse(_ text: String, _ millis: Int64) {
        #expect(SalesforceDateTime.millis(from: text) == millis)
    }

    @Test(arguments: ["", "2026-11-24", "2026-11-24T10:00:00", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-11-24T10:00:00.1234Z",
                      "2026-11-24T24:00:00Z", "2026-11-24T10:00:00+0000x", "2026-11-24 10:00:00Z"])
    func anythingElseIsNoDateTime(_ text: String) {
        #expect(SalesforceDateTime.millis(from: text) == nil)
    }
}
