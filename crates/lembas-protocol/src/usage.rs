//! The month's use on a LLeMbas server (`GET /v1/usage`), as a front end shows it: tokens, and
//! what they cost in each currency on its own — never added across currencies.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the month (and this device) used, as the server counts it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MonthUsage {
    /// Where the month began, as the server says it.
    pub from: Option<String>,
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// The month's cost in each currency its use was priced in (empty: nothing priced).
    pub cost_by_currency: BTreeMap<String, f64>,
    pub device_tokens_in: u64,
    pub device_tokens_out: u64,
}

impl MonthUsage {
    /// Reads the server's answer; `None` when it is not a usage answer at all.
    pub fn from_json(body: &Value) -> Option<MonthUsage> {
        let month = body.get("month")?;
        let n = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
        let cost_by_currency = month
            .get("cost_by_currency")
            .and_then(Value::as_object)
            .map(|costs| costs.iter().filter_map(|(c, v)| Some((c.clone(), v.as_f64()?))).collect())
            .unwrap_or_default();
        let device = body.get("device").cloned().unwrap_or(Value::Null);
        Some(MonthUsage {
            from: month.get("from").and_then(Value::as_str).map(str::to_owned),
            tokens_in: n(month, "tokens_in"),
            tokens_out: n(month, "tokens_out"),
            cost_by_currency,
            device_tokens_in: n(&device, "tokens_in"),
            device_tokens_out: n(&device, "tokens_out"),
        })
    }

    /// The month's cost as the status bar shows it (`€2.00 · $0.75`), or `None` when nothing
    /// was priced.
    pub fn cost_text(&self) -> Option<String> {
        let parts: Vec<String> = self
            .cost_by_currency
            .iter()
            .map(|(currency, amount)| match currency.to_ascii_uppercase().as_str() {
                "EUR" => format!("€{amount:.2}"),
                "USD" => format!("${amount:.2}"),
                "GBP" => format!("£{amount:.2}"),
                "JPY" => format!("¥{amount:.0}"),
                other => format!("{amount:.2} {other}"),
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join(" · "))
    }
}
