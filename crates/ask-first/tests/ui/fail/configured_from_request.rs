// A `Configured` value (shown as the server's configuration) is never built from what a
// request carries: `fixed` takes only a `&'static str`, and no conversion from `String` exists.
use ask_first::fact::Configured;

#[derive(serde::Deserialize)]
struct Args {
    region: String,
}

fn from_request(args: Args) -> Configured {
    Configured::fixed(&args.region)
}

fn converted(args: Args) -> Configured {
    Configured::from(args.region)
}

fn chosen_variable(args: &Args) -> Configured {
    Configured::from_env(&args.region).unwrap()
}

fn main() {
    // Positive control: a literal and a variable named in the source compile.
    const REGION: Configured = Configured::fixed("eu-west-3");
    let _ = (REGION, Configured::from_env("S3_REGION"));
    let args: Args = serde_json::from_str(r#"{"region":"us-east-1"}"#).unwrap();
    let _ = (from_request, converted, chosen_variable, args);
}
